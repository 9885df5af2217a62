package items

import (
	"fmt"

	"github.com/memvault/memvault/store"
)

// PutIfOp is the put PutIf makes, with its arguments checked as every
// backend does first: a nil value is ErrInvalidArgument.
func PutIfOp(ns store.Namespace, key string, value map[string]any, opts []store.PutOption) (store.PutOp, error) {
	if value == nil {
		return store.PutOp{}, fmt.Errorf("%w: nil value (PutIf does not delete)", store.ErrInvalidArgument)
	}
	return store.PutOp{Namespace: ns, Key: key, Value: value, Options: ResolvePut(opts)}, nil
}
