package pgstore_test

import (
	"context"
	"errors"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/memvault/memvault/memvaulttest/testkeys"
	"github.com/memvault/memvault/serde"
	"github.com/memvault/memvault/store"
	"github.com/memvault/memvault/store/pgstore"
	"github.com/memvault/memvault/store/storetest"
)

// TestConformance runs the whole store suite on PostgreSQL, plaintext and
// encrypted, with the index kinds the suite's indexed stores get.
func TestConformance(t *testing.T) {
	for _, tc := range []struct {
		name    string
		ann     pgstore.ANNKind
		serde   func(testing.TB) serde.Serializer
		halfvec bool // halfvec columns (pgvector-go's HalfVector in binary)
		simple  bool // the simple protocol: vectors go as text
		bulk    bool // every write through COPY (writeBulk), whatever its size
	}{
		{name: "Plain/HNSW", ann: pgstore.HNSW},
		{name: "Plain/Flat", ann: pgstore.Flat},
		{name: "Plain/IVFFlat", ann: pgstore.IVFFlat},
		{name: "Plain/HNSW/halfvec", ann: pgstore.HNSW, halfvec: true},
		{name: "Plain/HNSW/SimpleProtocol", ann: pgstore.HNSW, simple: true},
		{name: "Encrypted/HNSW", ann: pgstore.HNSW, serde: func(t testing.TB) serde.Serializer { return newSealed(t) }},
		{name: "Encrypted/Flat", ann: pgstore.Flat, serde: func(t testing.TB) serde.Serializer { return newSealed(t) }},
		// Per-subject keys: items under ("users", <subject>, …) sealed
		// under their subject's data key.
		{name: "Subjects/HNSW", ann: pgstore.HNSW, serde: func(t testing.TB) serde.Serializer { return testkeys.Subjects(t) }},
		// The bulk path (COPY into staging tables) for every write, so that
		// it passes the same suite as the one-batch path.
		{name: "Plain/HNSW/Bulk", ann: pgstore.HNSW, bulk: true},
		{name: "Plain/HNSW/halfvec/Bulk", ann: pgstore.HNSW, halfvec: true, bulk: true},
		{name: "Plain/HNSW/SimpleProtocol/Bulk", ann: pgstore.HNSW, simple: true, bulk: true},
		{name: "Encrypted/Flat/Bulk", ann: pgstore.Flat, serde: func(t testing.TB) serde.Serializer { return newSealed(t) }, bulk: true},
		{name: "Subjects/HNSW/Bulk", ann: pgstore.HNSW, serde: func(t testing.TB) serde.Serializer { return testkeys.Subjects(t) }, bulk: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			storetest.Run(t, func(t *testing.T, cfg storetest.Config) store.Store {
				opts := pgstore.Options{TTL: cfg.TTL, Now: cfg.Now}
				if cfg.Index != nil {
					opts.Index = cfg.Index
					opts.ANN = pgstore.ANNConfig{Kind: tc.ann, HalfVec: tc.halfvec}
				}
				if tc.serde != nil {
					opts.Serde = tc.serde(t)
				}
				var s *pgstore.Store
				if tc.simple {
					s = openSimpleProtocol(t, opts)
				} else {
					s, _ = open(t, opts)
				}
				if tc.bulk {
					pgstore.SetCopyMin(s, 1)
				}
				return s
			})
		})
	}
}

// txStore runs every write the suite makes through the store's …Tx twins
// in a transaction of the caller's (River's executorWithTx): Put, Delete,
// PutIf and batches of puts each begin a transaction on the pool, call
// their …Tx twin in it and commit. Reads, mixed batches and the
// optional capabilities go to the store as they are.
type txStore struct {
	*pgstore.Store
	pool *pgxpool.Pool
}

func (s txStore) inTx(ctx context.Context, fn func(pgx.Tx) error) error {
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(context.WithoutCancel(ctx)) //nolint:errcheck // after Commit a no-op
	if err := fn(tx); err != nil {
		return err
	}
	return tx.Commit(ctx)
}

func (s txStore) Put(ctx context.Context, ns store.Namespace, key string, value map[string]any, opts ...store.PutOption) error {
	return s.inTx(ctx, func(tx pgx.Tx) error { return s.Store.PutTx(ctx, tx, ns, key, value, opts...) })
}

func (s txStore) Delete(ctx context.Context, ns store.Namespace, key string) error {
	return s.inTx(ctx, func(tx pgx.Tx) error { return s.Store.DeleteTx(ctx, tx, ns, key) })
}

func (s txStore) PutIf(ctx context.Context, ns store.Namespace, key string, value map[string]any, cond store.PutCondition, opts ...store.PutOption) error {
	return s.inTx(ctx, func(tx pgx.Tx) error { return s.Store.PutIfTx(ctx, tx, ns, key, value, cond, opts...) })
}

func (s txStore) Batch(ctx context.Context, ops []store.Op) ([]store.Result, error) {
	puts := make([]store.PutOp, 0, len(ops))
	for _, op := range ops {
		p, ok := op.(store.PutOp)
		if !ok {
			return s.Store.Batch(ctx, ops)
		}
		puts = append(puts, p)
	}
	if err := s.inTx(ctx, func(tx pgx.Tx) error { return s.Store.PutBatchTx(ctx, tx, puts) }); err != nil {
		return nil, err
	}
	return make([]store.Result, len(ops)), nil
}

// TestConformanceTx runs the whole suite with every write going through
// the …Tx twins, plaintext and encrypted.
func TestConformanceTx(t *testing.T) {
	for _, tc := range []struct {
		enc, bulk bool
	}{{false, false}, {true, false}, {false, true}, {true, true}} {
		enc := tc.enc
		name := "Plain"
		if enc {
			name = "Encrypted"
		}
		if tc.bulk {
			name += "/Bulk" // COPY inside the caller's transaction
		}
		t.Run(name, func(t *testing.T) {
			storetest.Run(t, func(t *testing.T, cfg storetest.Config) store.Store {
				opts := pgstore.Options{TTL: cfg.TTL, Now: cfg.Now, Index: cfg.Index}
				if enc {
					opts.Serde = newSealed(t)
				}
				s, pool := open(t, opts)
				if tc.bulk {
					pgstore.SetCopyMin(s, 1)
				}
				return txStore{s, pool}
			})
		})
	}
}

// TestPutIfTxConflictKeepsTheTransaction: a refused PutIfTx rolls back its
// savepoint only; the caller's transaction goes on and commits.
func TestPutIfTxConflictKeepsTheTransaction(t *testing.T) {
	ctx := context.Background()
	s, pool := open(t, pgstore.Options{})
	ns := store.Namespace{"s"}
	if err := s.Put(ctx, ns, "k", map[string]any{"n": 1}); err != nil {
		t.Fatal(err)
	}
	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx) //nolint:errcheck // after Commit a no-op
	if err := s.PutIfTx(ctx, tx, ns, "k", map[string]any{"n": 2}, store.PutCondition{}); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("PutIfTx on a present item: %v, want ErrConflict", err)
	}
	if err := s.PutTx(ctx, tx, ns, "other", map[string]any{"n": 3}); err != nil {
		t.Fatalf("the transaction is unusable after a conflict: %v", err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if it, err := s.Get(ctx, ns, "other"); err != nil || it == nil {
		t.Fatalf("Get after commit = %v, %v", it, err)
	}
	if it, _ := s.Get(ctx, ns, "k"); it.Value["n"] != int64(1) {
		t.Fatalf("refused PutIfTx changed the item: %v", it.Value)
	}
}
