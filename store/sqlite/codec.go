package sqlite

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/memvault/memvault/internal/envelope"

	"github.com/memvault/memvault/internal/binding"
	"github.com/memvault/memvault/jsonvalue"
	"github.com/memvault/memvault/serde"
	"github.com/memvault/memvault/store"
)

// errCorrupt reports a stored value that does not decode.
var errCorrupt = errors.New("sqlite: corrupt stored value")

// encodeValue returns the value column for an item.
func (s *Store) encodeValue(ctx context.Context, ns, key string, v map[string]any, f *binding.Fence) ([]byte, error) {
	if s.serde == nil {
		b, err := jsonvalue.Marshal(v)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", store.ErrInvalidArgument, err)
		}
		return b, nil
	}
	typ, data, err := s.codec.SealFenced(ctx, binding.Item{Namespace: ns, Key: key}, v, f)
	if err != nil {
		return nil, err
	}
	return envelope.Encode(typ, data), nil
}

// decodeValue parses a value column. Without a serializer it is the JSON
// value; with one it is an envelope, or plain JSON written before
// encryption was turned on, which the serializer may refuse
// (serde.ErrPlaintextRefused).
func (s *Store) decodeValue(ctx context.Context, ns, key string, raw []byte) (map[string]any, error) {
	if s.serde == nil {
		return decodePlain(raw)
	}
	var v any
	tag, data, ok, err := envelope.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errCorrupt, err)
	}
	if ok {
		v, err = s.codec.Open(ctx, binding.Item{Namespace: ns, Key: key}, tag, data)
	} else {
		v, err = s.codec.Open(ctx, binding.Item{Namespace: ns, Key: key}, serde.TypeJSON, raw)
	}
	if err != nil {
		return nil, err
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%w: value is %T, not an object", errCorrupt, v)
	}
	// A codec may return json.Number or its own types for what was put.
	if _, err := jsonvalue.Normalize(m); err != nil {
		return nil, fmt.Errorf("%w: %v", errCorrupt, err)
	}
	return m, nil
}

// decodePlain parses a value column of a store without a serializer. An
// envelope is refused, never returned as the item's value: only a plaintext
// one (tag "json") decodes without a serializer.
func decodePlain(raw []byte) (map[string]any, error) {
	tag, data, ok, err := envelope.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errCorrupt, err)
	}
	if ok {
		if tag != serde.TypeJSON {
			return nil, fmt.Errorf("sqlite: %w: value is %q and the store has no serializer", envelope.ErrMalformed, tag)
		}
		raw = data
	}
	v, err := jsonvalue.Unmarshal(raw)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errCorrupt, err)
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%w: value is %T, not an object", errCorrupt, v)
	}
	return m, nil
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
