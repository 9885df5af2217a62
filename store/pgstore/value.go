package pgstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"github.com/memvault/memvault/internal/envelope"
	"github.com/memvault/memvault/serde"
	"github.com/memvault/memvault/store"
	"github.com/memvault/memvault/store/engine"
)

// jsonb returns the JSON text stored in store.value for a value column the
// engine encoded: plain JSONB (readable by LangGraph) for JSON, and for a
// serializer's envelope whose tag is "json"; the envelope object for any
// other tag. JSONB cannot hold U+0000: such a value is kept in a plaintext
// envelope (tag "json"), which only memvault reads back. The engine reads
// either form back (a plain value, with a serializer, is tag "json").
func (d *driver) jsonb(raw []byte) (string, error) {
	if !d.sealed {
		if hasNULEscape(raw) {
			return string(envelope.Encode(serde.TypeJSON, raw)), nil
		}
		return string(raw), nil
	}
	tag, data, ok, err := envelope.Parse(raw)
	if err != nil {
		return "", fmt.Errorf("postgres: %w", err)
	}
	if ok && tag == serde.TypeJSON && !hasNULEscape(data) {
		return string(data), nil
	}
	return string(raw), nil
}

// hasNULEscape reports whether JSON text holds the escape \u0000 (a
// backslash preceded by an even number of backslashes).
func hasNULEscape(b []byte) bool {
	for i := 0; ; {
		j := bytes.Index(b[i:], []byte(`\u0000`))
		if j < 0 {
			return false
		}
		j += i
		n := 0
		for k := j - 1; k >= 0 && b[k] == '\\'; k-- {
			n++
		}
		if n%2 == 0 {
			return true
		}
		i = j + 1
	}
}

// decodeValue turns a store.value read from the database into the item's
// value, as the engine does (a value that is not a JSON object is
// serde.ErrMalformed).
func (s *Store) decodeValue(ctx context.Context, prefix, key string, raw []byte) (map[string]any, error) {
	v, err := engine.DecodeValue(ctx, s.Engine, store.RowKey{NS: prefix, Key: key}, raw)
	if errors.Is(err, engine.ErrCorrupt) {
		return nil, fmt.Errorf("%w: value of %q: %w", serde.ErrMalformed, key, err)
	}
	return v, err
}
