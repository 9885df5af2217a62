package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/memvault/memvault/store"
)

// Batch runs ops (see store.Store): every read first, seeing the state
// before the batch's writes, then all writes in one transaction (one round
// trip), of several writes to one key the last winning.
func (s *Store) Batch(ctx context.Context, ops []store.Op) ([]store.Result, error) {
	if err := s.b.Check(ctx); err != nil {
		return nil, err
	}
	// Every op is checked, and the writes sealed and embedded, before any
	// read runs, so an invalid op fails the batch with nothing done.
	puts, err := s.itemsConfig().PlanWrites(ctx, ops)
	if err != nil {
		return nil, err
	}
	var (
		rows *putRows
		vecs [][]float32
		now  time.Time
	)
	if len(puts) > 0 {
		if rows, vecs, now, err = s.encodePuts(ctx, puts); err != nil {
			return nil, err
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
		if err := s.write(ctx, s.db, rows, vecs, now); err != nil {
			return nil, err
		}
	}
	return results, nil
}
