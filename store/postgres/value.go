package postgres

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/memvault/memvault/serde"
	"github.com/memvault/memvault/store"
)

// encodeValue returns the JSON text stored in store.value for an item.
func (s *Store) encodeValue(prefix, key string, v map[string]any) (string, error) {
	var (
		typ  = serde.TypeJSON
		data []byte
		err  error
	)
	if s.opts.Serde == nil {
		data, err = json.Marshal(v)
	} else {
		// Values are JSON whatever the codec: a serializer that could
		// carry NaN or non-JSON types (msgpack) must not get them.
		if v, err = store.CloneValue(v); err == nil {
			typ, data, err = serde.DumpsWith(s.opts.Serde, v, serde.ItemAAD(prefix, key))
		}
	}
	if err != nil {
		return "", fmt.Errorf("postgres: %w: value of %q: %w", store.ErrInvalidArgument, key, err)
	}
	// JSONB cannot hold U+0000: such a value is kept in a plaintext
	// envelope (tag "json"), which only memvault reads back.
	if typ == serde.TypeJSON && !hasNULEscape(data) {
		return string(data), nil
	}
	return string(store.EncodeEnvelope(typ, data)), nil
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
func (s *Store) decodeValue(prefix, key string, raw []byte) (map[string]any, error) {
	if s.values != nil {
		if v, ok := s.values.get(prefix, key, raw); ok {
			return v, nil
		}
	}
	v, err := s.decodeValueUncached(prefix, key, raw)
	if err != nil {
		return nil, err
	}
	if s.values != nil {
		s.values.add(prefix, key, raw, v)
	}
	return v, nil
}

func (s *Store) decodeValueUncached(prefix, key string, raw []byte) (map[string]any, error) {
	if tag, data, ok, err := store.ParseEnvelope(raw); err != nil {
		return nil, fmt.Errorf("postgres: value of %q: %w", key, err)
	} else if ok {
		if s.opts.Serde == nil {
			if tag != serde.TypeJSON {
				return nil, fmt.Errorf("%w: value of %q is encrypted (%q) and the store has no serializer", ErrEnvelope, key, tag)
			}
			return decodeJSONObject(key, data)
		}
		v, err := serde.LoadsWith(s.opts.Serde, tag, data, serde.ItemAAD(prefix, key))
		if err != nil {
			return nil, fmt.Errorf("postgres: decode value of %q: %w", key, err)
		}
		return asObject(key, v)
	}
	if s.opts.Serde == nil {
		return decodeJSONObject(key, raw)
	}
	v, err := serde.LoadsWith(s.opts.Serde, serde.TypeJSON, raw, serde.ItemAAD(prefix, key))
	if err != nil {
		return nil, fmt.Errorf("postgres: decode value of %q: %w", key, err)
	}
	return asObject(key, v)
}

func decodeJSONObject(key string, raw []byte) (map[string]any, error) {
	var v map[string]any
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	if err := d.Decode(&v); err != nil {
		return nil, fmt.Errorf("%w: value of %q: %v", serde.ErrMalformed, key, err)
	}
	if v == nil {
		return nil, fmt.Errorf("%w: value of %q is not a JSON object", serde.ErrMalformed, key)
	}
	return normalizeValue(v), nil
}

func asObject(key string, v any) (map[string]any, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%w: value of %q is %T, not an object", serde.ErrMalformed, key, v)
	}
	return normalizeValue(m), nil
}

// normalizeValue makes decoded values uniform whatever codec decoded them:
// a json.Number holding an integer that fits becomes int64, any other
// number float64, except integers beyond int64 that no float64 holds
// exactly, which stay json.Number.
func normalizeValue(m map[string]any) map[string]any {
	for k, v := range m {
		m[k] = normalizeAny(v)
	}
	return m
}

func normalizeAny(v any) any {
	switch x := v.(type) {
	case json.Number:
		if !strings.ContainsAny(string(x), ".eE") {
			if i, err := x.Int64(); err == nil {
				return i
			}
			// PostgreSQL prints 1e+300 as 1 and 300 zeros: that is a
			// float64 when it reads back as exactly this text.
			if f, err := x.Float64(); err == nil && strconv.FormatFloat(f, 'f', -1, 64) == string(x) {
				return f
			}
			return x
		}
		if f, err := x.Float64(); err == nil {
			return f
		}
		return x
	case map[string]any:
		return normalizeValue(x)
	case []any:
		for i := range x {
			x[i] = normalizeAny(x[i])
		}
		return x
	}
	return v
}

// cloneValue deep-copies a decoded JSON value.
func cloneValue(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = cloneAny(v)
	}
	return out
}

func cloneAny(v any) any {
	switch x := v.(type) {
	case map[string]any:
		return cloneValue(x)
	case []any:
		out := make([]any, len(x))
		for i := range x {
			out[i] = cloneAny(x[i])
		}
		return out
	}
	return v
}
