package core

import (
	"encoding/json"
	"math/big"
	"strconv"

	"github.com/memvault/memvault/checkpointer"
)

// MetadataContains reports whether md contains filter with PostgreSQL's
// JSONB containment semantics (metadata @> filter), the rule every backend
// applies to ListOptions.Filter: every filter key must be present with a
// value that contains the filter's value; objects match partially and
// recursively; an array contains another when each element of the latter is
// contained in some element of the former; scalars match when equal, numbers
// compared by value (1 and 1.0 are equal). An empty filter matches all.
func MetadataContains(md checkpointer.Metadata, filter map[string]any) bool {
	return containsObject(map[string]any(md), filter)
}

func containsObject(have, want map[string]any) bool {
	for k, w := range want {
		h, ok := have[k]
		if !ok || !jsonContains(h, w) {
			return false
		}
	}
	return true
}

func jsonContains(have, want any) bool {
	switch w := want.(type) {
	case map[string]any:
		h, ok := asObject(have)
		return ok && containsObject(h, w)
	case checkpointer.Metadata:
		h, ok := asObject(have)
		return ok && containsObject(h, w)
	}
	if wa, ok := asArray(want); ok {
		ha, ok := asArray(have)
		if !ok {
			return false
		}
	next:
		for _, we := range wa {
			for _, he := range ha {
				if jsonContains(he, we) {
					continue next
				}
			}
			return false
		}
		return true
	}
	return scalarEqual(have, want)
}

func asObject(v any) (map[string]any, bool) {
	switch x := v.(type) {
	case map[string]any:
		return x, true
	case checkpointer.Metadata:
		return x, true
	}
	return nil, false
}

func asArray(v any) ([]any, bool) {
	switch x := v.(type) {
	case []any:
		return x, true
	case []string:
		out := make([]any, len(x))
		for i, s := range x {
			out[i] = s
		}
		return out, true
	case []int:
		out := make([]any, len(x))
		for i, n := range x {
			out[i] = n
		}
		return out, true
	case []int64:
		out := make([]any, len(x))
		for i, n := range x {
			out[i] = n
		}
		return out, true
	case []float64:
		out := make([]any, len(x))
		for i, n := range x {
			out[i] = n
		}
		return out, true
	}
	return nil, false
}

func scalarEqual(a, b any) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	if na, ok := toNumber(a); ok {
		nb, ok := toNumber(b)
		return ok && na.Cmp(nb) == 0
	}
	switch x := a.(type) {
	case string:
		y, ok := b.(string)
		return ok && x == y
	case bool:
		y, ok := b.(bool)
		return ok && x == y
	}
	return false
}

// toNumber converts any Go number (or json.Number) to an exact rational, so
// int64 values beyond 2^53 compare exactly.
func toNumber(v any) (*big.Rat, bool) {
	r := new(big.Rat)
	switch x := v.(type) {
	case int:
		return r.SetInt64(int64(x)), true
	case int8:
		return r.SetInt64(int64(x)), true
	case int16:
		return r.SetInt64(int64(x)), true
	case int32:
		return r.SetInt64(int64(x)), true
	case int64:
		return r.SetInt64(x), true
	case uint:
		return r.SetUint64(uint64(x)), true
	case uint8:
		return r.SetUint64(uint64(x)), true
	case uint16:
		return r.SetUint64(uint64(x)), true
	case uint32:
		return r.SetUint64(uint64(x)), true
	case uint64:
		return r.SetUint64(x), true
	case float32:
		// The float64 JSON gives it (package jsonvalue), as metadata
		// stores it: float32(0.1) is 0.1.
		f, _ := strconv.ParseFloat(strconv.FormatFloat(float64(x), 'g', -1, 32), 64)
		if r.SetFloat64(f) == nil {
			return nil, false
		}
		return r, true
	case *big.Int:
		if x == nil {
			return nil, false
		}
		return r.SetInt(x), true
	case float64:
		if r.SetFloat64(x) == nil {
			return nil, false
		}
		return r, true
	case json.Number:
		if _, ok := r.SetString(x.String()); !ok {
			return nil, false
		}
		return r, true
	}
	return nil, false
}
