package store

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
)

// CloneValue returns a deep copy of a value that shares no memory with v,
// keeping JSON types (map[string]any, []any, string, bool, nil, Go numbers,
// json.Number) as they are. Other types (structs, typed slices and maps)
// are converted through encoding/json (numbers then become json.Number).
// It fails with ErrInvalidArgument for values JSON cannot hold (NaN,
// infinities, channels, functions).
func CloneValue(v map[string]any) (map[string]any, error) {
	if v == nil {
		return nil, nil
	}
	out, err := cloneAny(v, 0)
	if err != nil {
		return nil, err
	}
	return out.(map[string]any), nil
}

// maxDepth bounds recursion on cyclic or absurdly deep values.
const maxDepth = 10000

func cloneAny(v any, depth int) (any, error) {
	if depth > maxDepth {
		return nil, fmt.Errorf("%w: value nested deeper than %d levels", ErrInvalidArgument, maxDepth)
	}
	switch x := v.(type) {
	case nil, string, bool, json.Number,
		int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64:
		return v, nil
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil, fmt.Errorf("%w: %v is not a JSON number", ErrInvalidArgument, x)
		}
		return v, nil
	case float32:
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			return nil, fmt.Errorf("%w: %v is not a JSON number", ErrInvalidArgument, x)
		}
		return v, nil
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			c, err := cloneAny(e, depth+1)
			if err != nil {
				return nil, err
			}
			m[k] = c
		}
		return m, nil
	case []any:
		l := make([]any, len(x))
		for i, e := range x {
			c, err := cloneAny(e, depth+1)
			if err != nil {
				return nil, err
			}
			l[i] = c
		}
		return l, nil
	}
	if rv := reflect.ValueOf(v); rv.Kind() == reflect.Pointer && rv.IsNil() {
		return nil, nil
	}
	if _, err := json.Marshal(v); err != nil {
		return nil, fmt.Errorf("%w: value of type %T: %v", ErrInvalidArgument, v, err)
	}
	return viaJSON(v), nil
}

// CloneItem returns a deep copy of it (nil for nil). The value must already
// be JSON-clean, as values read from a store are.
func CloneItem(it *Item) *Item {
	if it == nil {
		return nil
	}
	c := *it
	c.Namespace = it.Namespace.Clone()
	c.Value = cloneClean(it.Value).(map[string]any)
	return &c
}

// cloneClean deep-copies maps and slices of an already validated value.
func cloneClean(v any) any {
	switch x := v.(type) {
	case map[string]any:
		if x == nil {
			return map[string]any(nil)
		}
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[k] = cloneClean(e)
		}
		return m
	case []any:
		if x == nil {
			return []any(nil)
		}
		l := make([]any, len(x))
		for i, e := range x {
			l[i] = cloneClean(e)
		}
		return l
	}
	return v
}
