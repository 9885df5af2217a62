package postgres

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/memvault/memvault/serde"
	"github.com/memvault/memvault/store"
)

// envelopeMarker is the key that marks a stored value as an encrypted
// envelope: {"__memvault_enc__": 1, "t": "<type tag>", "d": "<base64>"}.
const envelopeMarker = "__memvault_enc__"

type envelope struct {
	Version int    `json:"__memvault_enc__"`
	Tag     string `json:"t"`
	Data    string `json:"d"`
}

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
	b, err := json.Marshal(envelope{Version: 1, Tag: typ, Data: base64.StdEncoding.EncodeToString(data)})
	if err != nil {
		return "", fmt.Errorf("postgres: encode envelope: %w", err)
	}
	return string(b), nil
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
	if env, ok, err := parseEnvelope(raw); err != nil {
		return nil, err
	} else if ok {
		data, err := base64.StdEncoding.DecodeString(env.Data)
		if err != nil {
			return nil, fmt.Errorf("%w: value of %q: bad base64", ErrEnvelope, key)
		}
		if s.opts.Serde == nil {
			if env.Tag != serde.TypeJSON {
				return nil, fmt.Errorf("%w: value of %q is encrypted (%q) and the store has no serializer", ErrEnvelope, key, env.Tag)
			}
			return decodeJSONObject(key, data)
		}
		v, err := serde.LoadsWith(s.opts.Serde, env.Tag, data, serde.ItemAAD(prefix, key))
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

// parseEnvelope reports whether raw is an envelope object, and decodes it.
// Any object with the marker key must be a well-formed envelope.
func parseEnvelope(raw []byte) (envelope, bool, error) {
	var env envelope
	if !bytes.Contains(raw, []byte(`"`+envelopeMarker+`"`)) {
		return env, false, nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return env, false, fmt.Errorf("%w: %v", ErrEnvelope, err)
	}
	if _, ok := m[envelopeMarker]; !ok {
		return env, false, nil // the marker text appears only nested
	}
	if len(m) != 3 {
		return env, false, fmt.Errorf("%w: unexpected fields", ErrEnvelope)
	}
	if err := json.Unmarshal(raw, &env); err != nil {
		return env, false, fmt.Errorf("%w: %v", ErrEnvelope, err)
	}
	if env.Version != 1 || env.Tag == "" {
		return env, false, fmt.Errorf("%w: version %d, tag %q", ErrEnvelope, env.Version, env.Tag)
	}
	return env, true, nil
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
