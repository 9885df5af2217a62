package items

import (
	"fmt"

	"github.com/memvault/memvault/store"

	"github.com/memvault/memvault/jsonvalue"
)

// CloneValue returns v in memvault's JSON value model (see package
// jsonvalue): a deep copy sharing no memory with v, in which every integer
// is int64 (uint64 or *big.Int beyond), every float float64, json.Number
// the type its literal names, []byte a copy of itself, and structs, typed
// maps and slices their JSON form. Every backend stores this copy, so a
// value reads back from each of them with the same Go types. Values JSON
// cannot hold (NaN, infinities, invalid UTF-8, channels, functions, nesting
// deeper than jsonvalue.MaxDepth) fail with ErrInvalidArgument.
func CloneValue(v map[string]any) (map[string]any, error) {
	out, err := jsonvalue.CanonicalMap(v)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", store.ErrInvalidArgument, err)
	}
	return out, nil
}

// CloneItem returns a deep copy of it (nil for nil). The value must already
// be JSON-clean, as values read from a store are.
func CloneItem(it *store.Item) *store.Item {
	if it == nil {
		return nil
	}
	c := *it
	c.Namespace = it.Namespace.Clone()
	c.Value = jsonvalue.Copy(it.Value).(map[string]any)
	return &c
}
