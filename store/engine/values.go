package engine

import (
	"context"
	"errors"
	"fmt"

	"github.com/memvault/memvault/internal/binding"
	"github.com/memvault/memvault/internal/envelope"
	"github.com/memvault/memvault/jsonvalue"
	"github.com/memvault/memvault/serde"
	"github.com/memvault/memvault/store"
)

// ErrCorrupt reports a stored value that does not decode.
var ErrCorrupt = errors.New("corrupt stored value")

// values is how a store's values are stored: as JSON without serializer,
// as an envelope {"t": type tag, "d": payload} sealed to the item's
// namespace and key (binding.Item) with one. The engine encodes every
// value it hands a driver and opens every value a driver returns, so that
// a driver never sees a value in the clear when the store encrypts.
type values struct {
	driver string
	serde  serde.Serializer // nil: plain JSON
	codec  binding.Codec    // of serde (zero without)
}

func newValues(driver string, s serde.Serializer) values {
	v := values{driver: driver, serde: s}
	if s != nil {
		v.codec = binding.New(s)
	}
	return v
}

// Encode returns the value column of the item at k: JSON, or an envelope
// sealed to k, recording the sealing key in f for the write's fence.
func (vs values) Encode(ctx context.Context, k store.RowKey, v map[string]any, f *binding.Fence) ([]byte, error) {
	if vs.serde == nil {
		b, err := jsonvalue.Marshal(v)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", store.ErrInvalidArgument, err)
		}
		return b, nil
	}
	typ, data, err := binding.SealAt(ctx, vs.codec, binding.Item{Namespace: k.NS, Key: k.Key}, v, f)
	if err != nil {
		return nil, err
	}
	return envelope.Encode(typ, data), nil
}

// Decode opens a value column of the item at k. Without a serializer it
// is the JSON value (an envelope only when plaintext, tag "json", and
// never returned as the value); with one it is an envelope, or plain JSON
// written before encryption was turned on, which the serializer may refuse
// (serde.ErrPlaintextRefused).
func (vs values) Decode(ctx context.Context, k store.RowKey, raw []byte) (map[string]any, error) {
	if vs.serde == nil {
		return vs.DecodePlain(raw)
	}
	tag, data, ok, err := envelope.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("%s: %w: %v", vs.driver, ErrCorrupt, err)
	}
	if !ok {
		tag, data = serde.TypeJSON, raw
	}
	v, err := vs.codec.Open(ctx, binding.Item{Namespace: k.NS, Key: k.Key}, tag, data)
	if err != nil {
		return nil, err
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%s: %w: value is %T, not an object", vs.driver, ErrCorrupt, v)
	}
	// A codec may return json.Number or its own types for what was put.
	if _, err := jsonvalue.Normalize(m); err != nil {
		return nil, fmt.Errorf("%s: %w: %v", vs.driver, ErrCorrupt, err)
	}
	return m, nil
}

// DecodePlain parses a value column of a store without a serializer. An
// envelope is refused, never returned as the item's value: only a
// plaintext one (tag "json") decodes without a serializer.
func (vs values) DecodePlain(raw []byte) (map[string]any, error) {
	tag, data, ok, err := envelope.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("%s: %w: %v", vs.driver, ErrCorrupt, err)
	}
	if ok {
		if tag != serde.TypeJSON {
			return nil, fmt.Errorf("%s: %w: value is %q and the store has no serializer", vs.driver, envelope.ErrMalformed, tag)
		}
		raw = data
	}
	v, err := jsonvalue.Unmarshal(raw)
	if err != nil {
		return nil, fmt.Errorf("%s: %w: %v", vs.driver, ErrCorrupt, err)
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%s: %w: value is %T, not an object", vs.driver, ErrCorrupt, v)
	}
	return m, nil
}
