package postgres

import (
	"context"
	"fmt"

	"github.com/memvault/memvault/store/internal/indexing"
	"github.com/memvault/memvault/store/internal/items"

	"github.com/memvault/memvault/store"
)

// Batch runs ops (see store.Store): every read first, seeing the state
// before the batch's writes, then all writes in one transaction (one round
// trip), of several writes to one key the last winning.
func (s *Store) Batch(ctx context.Context, ops []store.Op) ([]store.Result, error) {
	if err := s.checkOpen(); err != nil {
		return nil, err
	}
	var puts []store.PutOp
	for i, op := range ops {
		if err := s.validateOp(op); err != nil {
			return nil, fmt.Errorf("postgres: op %d: %w", i, err)
		}
		if p, ok := op.(store.PutOp); ok {
			puts = append(puts, p)
		}
	}
	results := make([]store.Result, len(ops))
	for i, op := range ops {
		var err error
		switch o := op.(type) {
		case store.GetOp:
			results[i].Item, err = s.get(ctx, o.Namespace, o.Key, o.RefreshTTL)
		case store.SearchOp:
			results[i].Items, err = s.Search(ctx, o.Prefix, o.Options)
		case store.ListNamespacesOp:
			results[i].Namespaces, err = s.ListNamespaces(ctx, o.Options)
		}
		if err != nil {
			return nil, fmt.Errorf("postgres: op %d: %w", i, err)
		}
	}
	if len(puts) > 0 {
		if err := s.put(ctx, s.db, puts); err != nil {
			return nil, err
		}
	}
	return results, nil
}

// validateOp checks an op before anything runs, so an invalid op fails the
// batch without side effects.
func (s *Store) validateOp(op store.Op) error {
	if o, ok := op.(store.PutOp); ok {
		_, err := s.preparePut(o)
		return err
	}
	return items.ValidateOp(op)
}

// preparePut validates a put or delete.
func (s *Store) preparePut(o store.PutOp) (store.PutOp, error) {
	if err := o.Namespace.Validate(); err != nil {
		return o, err
	}
	if err := store.ValidateKey(o.Key); err != nil {
		return o, err
	}
	if o.Value == nil {
		return o, nil
	}
	if _, err := items.ResolveTTL(s.opts.TTL, o.Options.TTL); err != nil {
		return o, err
	}
	if s.index == nil && len(o.Options.Index) > 0 {
		return o, fmt.Errorf("%w: WithIndex%q", store.ErrNoIndex, o.Options.Index)
	}
	if o.Options.Index != nil {
		if err := indexing.ValidatePaths(o.Options.Index); err != nil {
			return o, err
		}
	}
	return o, nil
}
