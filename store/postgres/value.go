package postgres

import (
	"bytes"
	"context"
	"fmt"

	"github.com/memvault/memvault/internal/envelope"

	"github.com/memvault/memvault/internal/binding"
	"github.com/memvault/memvault/jsonvalue"
	"github.com/memvault/memvault/serde"
	"github.com/memvault/memvault/store"
)

// encodeValue returns the JSON text stored in store.value for an item
// whose value is already in memvault's JSON model (items.CloneValue).
func (s *Store) encodeValue(ctx context.Context, prefix, key string, v map[string]any, f *binding.Fence) (string, error) {
	var (
		typ  = serde.TypeJSON
		data []byte
		err  error
	)
	if s.opts.Serde == nil {
		data, err = jsonvalue.Marshal(v)
	} else {
		typ, data, err = s.codec.SealFenced(ctx, binding.Item{Namespace: prefix, Key: key}, v, f)
	}
	if err != nil {
		return "", fmt.Errorf("postgres: %w: value of %q: %w", store.ErrInvalidArgument, key, err)
	}
	// JSONB cannot hold U+0000: such a value is kept in a plaintext
	// envelope (tag "json"), which only memvault reads back.
	if typ == serde.TypeJSON && !hasNULEscape(data) {
		return string(data), nil
	}
	return string(envelope.Encode(typ, data)), nil
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
// value: plain JSON objects as they are (through the serializer when one is
// configured, so a strict encrypted serializer refuses them), envelopes
// through the serializer with the item's associated data.
func (s *Store) decodeValue(ctx context.Context, prefix, key string, raw []byte) (map[string]any, error) {
	// A data subject's values are always decrypted, never served from the
	// cache: destroying the subject's keys must stop them from being read,
	// a restored copy of their rows included.
	cache := s.values != nil && !s.codec.ItemHasSubject(binding.Item{Namespace: prefix, Key: key})
	if cache {
		if v, ok := s.values.get(prefix, key, raw); ok {
			return v, nil
		}
	}
	v, err := s.decodeValueUncached(ctx, prefix, key, raw)
	if err != nil {
		return nil, err
	}
	if cache {
		s.values.add(prefix, key, raw, v)
	}
	return v, nil
}

func (s *Store) decodeValueUncached(ctx context.Context, prefix, key string, raw []byte) (map[string]any, error) {
	if tag, data, ok, err := envelope.Parse(raw); err != nil {
		return nil, fmt.Errorf("postgres: value of %q: %w", key, err)
	} else if ok {
		if s.opts.Serde == nil {
			if tag != serde.TypeJSON {
				return nil, fmt.Errorf("%w: value of %q is encrypted (%q) and the store has no serializer", ErrEnvelope, key, tag)
			}
			return decodeJSONObject(key, data)
		}
		v, err := s.codec.Open(ctx, binding.Item{Namespace: prefix, Key: key}, tag, data)
		if err != nil {
			return nil, fmt.Errorf("postgres: decode value of %q: %w", key, err)
		}
		return asObject(key, v)
	}
	if s.opts.Serde == nil {
		return decodeJSONObject(key, raw)
	}
	v, err := s.codec.Open(ctx, binding.Item{Namespace: prefix, Key: key}, serde.TypeJSON, raw)
	if err != nil {
		return nil, fmt.Errorf("postgres: decode value of %q: %w", key, err)
	}
	return asObject(key, v)
}

func decodeJSONObject(key string, raw []byte) (map[string]any, error) {
	v, err := jsonvalue.Unmarshal(raw)
	if err != nil {
		return nil, fmt.Errorf("%w: value of %q: %v", serde.ErrMalformed, key, err)
	}
	m, ok := v.(map[string]any)
	if !ok || m == nil {
		return nil, fmt.Errorf("%w: value of %q is not a JSON object", serde.ErrMalformed, key)
	}
	return m, nil
}

// asObject brings a value a serializer decoded into the JSON model (a
// codec may return json.Number or its own types for what was put).
func asObject(key string, v any) (map[string]any, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%w: value of %q is %T, not an object", serde.ErrMalformed, key, v)
	}
	if _, err := jsonvalue.Normalize(m); err != nil {
		return nil, fmt.Errorf("%w: value of %q: %v", serde.ErrMalformed, key, err)
	}
	return m, nil
}
