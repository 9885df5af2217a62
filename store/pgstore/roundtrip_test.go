package pgstore_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/memvault/memvault/embeddings"
	"github.com/memvault/memvault/memvaulttest/pgtest"
	"github.com/memvault/memvault/store"
	"github.com/memvault/memvault/store/pgstore"
)

// statements counts what a pool sends: single statements and batches.
type statements struct{ queries, batches atomic.Int64 }

func (c *statements) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	c.queries.Add(1)
	return ctx
}
func (c *statements) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}
func (c *statements) TraceBatchStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	c.batches.Add(1)
	return ctx
}
func (c *statements) TraceBatchQuery(context.Context, *pgx.Conn, pgx.TraceBatchQueryData) {}
func (c *statements) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData)     {}

// TestWritesAreOneRoundTrip: on the store engine, a Put and a Batch of
// puts replacing items still send one batch and no other statement. The
// engine reads each row before it writes it unless the driver keeps
// created_at itself (store.DriverCaps.UpsertVersions); that read would be
// a round trip per item.
func TestWritesAreOneRoundTrip(t *testing.T) {
	ctx := context.Background()
	cfg := pgtest.Pool(t).Config()
	var n statements
	cfg.ConnConfig.Tracer = &n
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	must(t, err)
	t.Cleanup(pool.Close)
	s, err := pgstore.New(pool, pgstore.Options{Index: &store.IndexConfig{Embedder: embeddings.NewUnkeyedHashing(16), Fields: []string{"text"}}})
	must(t, err)
	t.Cleanup(func() { s.Close() })
	must(t, s.Setup(ctx))
	ns := store.Namespace{"users", "u"}
	var ops []store.Op
	for i := range 10 {
		ops = append(ops, store.PutOp{Namespace: ns, Key: fmt.Sprint(i), Value: map[string]any{"text": fmt.Sprint("memory ", i)}})
	}
	_, err = s.Batch(ctx, ops) // and registers pgvector's types on the connection
	must(t, err)
	before, err := s.Get(ctx, ns, "3")
	must(t, err)

	n.queries.Store(0)
	n.batches.Store(0)
	must(t, s.Put(ctx, ns, "3", map[string]any{"text": "memory 3, again"}))
	_, err = s.Batch(ctx, ops)
	must(t, err)
	if q, b := n.queries.Load(), n.batches.Load(); q != 0 || b != 2 {
		t.Errorf("a Put and a Batch of 10 replacing puts sent %d statements and %d batches, want 0 and 2", q, b)
	}
	after, err := s.Get(ctx, ns, "3")
	must(t, err)
	if !after.CreatedAt.Equal(before.CreatedAt) || !after.UpdatedAt.After(before.UpdatedAt) {
		t.Errorf("replaced item: created %v → %v, updated %v → %v", before.CreatedAt, after.CreatedAt, before.UpdatedAt, after.UpdatedAt)
	}
}
