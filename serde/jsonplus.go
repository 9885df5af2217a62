package serde

// NOTE: provisional minimal codec so that other packages can build and test
// while the full JsonPlus (issue 3) is written. Replace wholesale.

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// JSONPlus is LangGraph's JsonPlus codec. The zero value is ready to use.
type JSONPlus struct{}

// DumpsTyped implements Serializer.
func (JSONPlus) DumpsTyped(v any) (string, []byte, error) {
	switch x := v.(type) {
	case nil:
		return TypeNull, nil, nil
	case []byte:
		return TypeBytes, append([]byte(nil), x...), nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return "", nil, fmt.Errorf("%w: %v", ErrUnsupportedValue, err)
	}
	return TypeJSON, b, nil
}

// LoadsTyped implements Serializer.
func (JSONPlus) LoadsTyped(typ string, data []byte) (any, error) {
	switch typ {
	case TypeNull, TypeEmpty:
		return nil, nil
	case TypeBytes, TypeByteArray:
		return append([]byte(nil), data...), nil
	case TypeJSON:
		d := json.NewDecoder(bytes.NewReader(data))
		d.UseNumber()
		var v any
		if err := d.Decode(&v); err != nil {
			return nil, fmt.Errorf("%w: %v", ErrMalformed, err)
		}
		return v, nil
	}
	return nil, unknownType(typ)
}
