package sqlite

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/serde"
	"github.com/memvault/memvault/store"
)

// envelope is the value column of an item written through a serializer:
// the type tag and the payload, base64. The payload is bound to the item's
// namespace and key (serde.ItemAAD) when the serializer supports it.
type envelope struct {
	T string `json:"t"`
	D string `json:"d"`
}

// errCorrupt reports a stored value that does not decode.
var errCorrupt = errors.New("sqlite: corrupt stored value")

// encodeValue returns the value column for an item.
func (s *Store) encodeValue(ns, key string, v map[string]any) ([]byte, error) {
	if s.serde == nil {
		b, err := json.Marshal(v)
		if err != nil {
			return nil, fmt.Errorf("%w: %v", store.ErrInvalidArgument, err)
		}
		return b, nil
	}
	typ, data, err := serde.DumpsWith(s.serde, v, serde.ItemAAD(ns, key))
	if err != nil {
		return nil, err
	}
	return json.Marshal(envelope{T: typ, D: base64.StdEncoding.EncodeToString(data)})
}

// decodeValue parses a value column. Without a serializer it is the JSON
// value; with one it is an envelope, or plain JSON written before
// encryption was turned on, which the serializer may refuse
// (serde.ErrPlaintextRefused).
func (s *Store) decodeValue(ns, key string, raw []byte) (map[string]any, error) {
	if s.serde == nil {
		return decodePlain(raw)
	}
	var v any
	var err error
	if env, ok := parseEnvelope(raw); ok {
		data, derr := base64.StdEncoding.DecodeString(env.D)
		if derr != nil {
			return nil, fmt.Errorf("%w: %v", errCorrupt, derr)
		}
		v, err = serde.LoadsWith(s.serde, env.T, data, serde.ItemAAD(ns, key))
	} else {
		v, err = serde.LoadsWith(s.serde, serde.TypeJSON, raw, serde.ItemAAD(ns, key))
	}
	if err != nil {
		return nil, err
	}
	m, ok := normalize(v).(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%w: value is %T, not an object", errCorrupt, v)
	}
	return m, nil
}

func decodePlain(raw []byte) (map[string]any, error) {
	v, err := checkpointer.DecodeJSONValue(raw)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errCorrupt, err)
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%w: value is %T, not an object", errCorrupt, v)
	}
	return m, nil
}

// parseEnvelope recognises {"t": "...", "d": "..."} with exactly those keys.
func parseEnvelope(raw []byte) (envelope, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '{' {
		return envelope{}, false
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil || len(m) != 2 {
		return envelope{}, false
	}
	var env envelope
	if json.Unmarshal(m["t"], &env.T) != nil || json.Unmarshal(m["d"], &env.D) != nil || env.T == "" {
		return envelope{}, false
	}
	return env, true
}

// normalize turns json.Number into int64 or float64, as values decoded
// from plain JSON are.
func normalize(v any) any {
	switch x := v.(type) {
	case json.Number:
		if n, err := x.Int64(); err == nil {
			return n
		}
		f, _ := x.Float64()
		return f
	case map[string]any:
		for k, e := range x {
			x[k] = normalize(e)
		}
	case []any:
		for i, e := range x {
			x[i] = normalize(e)
		}
	}
	return v
}

// encodeVector is the embedding column: little-endian float32s.
func encodeVector(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, f := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(f))
	}
	return b
}

// decodeVector fills dst (resized to fit) from an embedding column and
// reports false for a column that is not a whole number of float32s.
func decodeVector(dst []float32, b []byte) ([]float32, bool) {
	if len(b)%4 != 0 {
		return dst, false
	}
	n := len(b) / 4
	if cap(dst) < n {
		dst = make([]float32, n)
	}
	dst = dst[:n]
	for i := range dst {
		dst[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return dst, true
}
