package items

import (
	"fmt"

	"github.com/memvault/memvault/store"
	"github.com/memvault/memvault/store/internal/filtering"
)

// ResolvePut applies opts.
func ResolvePut(opts []store.PutOption) store.PutOptions {
	var o store.PutOptions
	for _, f := range opts {
		f(&o)
	}
	return o
}

// ResolveGet applies opts.
func ResolveGet(opts []store.GetOption) store.GetOptions {
	var o store.GetOptions
	for _, f := range opts {
		f(&o)
	}
	return o
}

// ValidateOp checks the arguments of a read op (GetOp, SearchOp,
// ListNamespacesOp) and rejects nil and unknown ops, so every backend fails
// a Batch the same way before anything runs. PutOps pass: each backend
// validates them while preparing the write.
func ValidateOp(op store.Op) error {
	switch o := op.(type) {
	case store.GetOp:
		if err := o.Namespace.Validate(); err != nil {
			return err
		}
		return store.ValidateKey(o.Key)
	case store.SearchOp:
		if err := o.Prefix.ValidatePrefix(); err != nil {
			return err
		}
		return CheckSearch(o.Options)
	case store.ListNamespacesOp:
		return o.Options.Validate()
	case store.PutOp:
		return nil
	case nil:
		return fmt.Errorf("%w: nil op", store.ErrInvalidArgument)
	default:
		return fmt.Errorf("%w: unknown op %T", store.ErrInvalidArgument, op)
	}
}

// CheckSearch checks a search's options: the limit and offset in range and
// the filter well formed.
func CheckSearch(opt store.SearchOptions) error {
	if err := opt.Validate(); err != nil {
		return err
	}
	return filtering.ValidateFilter(opt.Filter)
}
