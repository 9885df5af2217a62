package pgstore_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/memvault/memvault/embeddings"
	"github.com/memvault/memvault/memvaulttest/pgtest"
	"github.com/memvault/memvault/store"
	"github.com/memvault/memvault/store/pgstore"
)

// TestReadReplica: a Store opened on a hot standby's pool (no Setup: the
// standby is read-only) answers Get, Search (HNSW, with a query and a
// filter) and ListNamespaces exactly as the primary does once the standby
// has replayed the writes (pgtest's Standby.CatchUp: it once compared the
// primary's WAL write position, which an asynchronous commit lies beyond
// until the WAL writer writes it, and the replica then read nothing),
// encrypted values included. Reads that refresh TTLs write, so on a replica
// they fail with PostgreSQL's read-only error unless refresh on read is
// off, as the README's scale-out section says.
func TestReadReplica(t *testing.T) {
	ctx := context.Background()
	standby := pgtest.StartStandby(t)
	testPool, schema := pgtest.Schema(t)
	// Commits as a durable primary's are, as in the checkpointer's
	// TestReadReplica, so that the lag logged below is what a reader of a
	// replica sees. (CatchUp waits for asynchronous commits too, the test
	// cluster's default, but the lag it measures after those was 200-400 ms
	// here, against 7-45 ms after synchronous ones.)
	cfg := testPool.Config()
	cfg.ConnConfig.RuntimeParams["synchronous_commit"] = "on"
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	must(t, err)
	defer pool.Close()
	opts := func(refresh bool) pgstore.Options {
		return pgstore.Options{
			Schema: schema,
			Serde:  newSealed(t),
			Index:  &store.IndexConfig{Dims: 64, Embedder: embeddings.NewUnkeyedHashing(64), Fields: []string{"text"}}, ANN: pgstore.ANNConfig{Kind: pgstore.HNSW},
			TTL: &store.TTLConfig{DefaultTTL: time.Hour, DisableRefreshOnRead: !refresh, SweepInterval: -1},
			// Caches off: every read below reaches its server.
			CacheSize: -1, QueryCacheSize: -1,
		}
	}
	primary, err := pgstore.New(pool, opts(false))
	must(t, err)
	defer primary.Close()
	must(t, primary.Setup(ctx))
	words := []string{"allergy", "invoice", "flight", "password", "coffee", "refund"}
	var ops []store.Op
	for i := range 60 {
		ns := store.Namespace{"users", fmt.Sprintf("u%d", i%3), "memories"}
		text := fmt.Sprintf("%s %s note %d", words[i%len(words)], words[(i/6)%len(words)], i)
		ops = append(ops, store.PutOp{Namespace: ns, Key: fmt.Sprintf("m%d", i), Value: map[string]any{"text": text, "i": i}})
	}
	_, err = primary.Batch(ctx, ops)
	must(t, err)
	lag, err := standby.CatchUp(ctx)
	must(t, err)
	t.Logf("standby replayed the writes %v after the last commit", lag.Round(10*time.Microsecond))

	rpool, err := pgxpool.New(ctx, standby.DSN)
	must(t, err)
	defer rpool.Close()
	replica, err := pgstore.New(rpool, opts(false))
	must(t, err)
	defer replica.Close()

	reads := []store.Op{
		store.GetOp{Namespace: store.Namespace{"users", "u1", "memories"}, Key: "m4"},
		store.SearchOp{Prefix: store.Namespace{"users"}, Options: store.SearchOptions{Query: "allergy flight", Limit: 10}},
		store.SearchOp{Prefix: store.Namespace{"users", "u2"}, Options: store.SearchOptions{Query: "coffee refund", Limit: 5, Filter: map[string]any{"i": map[string]any{"$gt": 10}}}},
		store.SearchOp{Prefix: store.Namespace{"users", "u0"}, Options: store.SearchOptions{Limit: 7, Offset: 3}},
		store.ListNamespacesOp{Options: store.ListNamespacesOptions{}},
	}
	want, err := primary.Batch(ctx, reads)
	must(t, err)
	got, err := replica.Batch(ctx, reads)
	if err != nil {
		t.Fatalf("reads on the replica: %v", err)
	}
	if len(want[1].Items) != 10 || len(want[2].Items) == 0 || want[0].Item == nil {
		t.Fatalf("primary results too thin to compare: %+v", want)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("replica results differ from the primary's:\n got %+v\nwant %+v", got, want)
	}

	// Refresh on read writes: refused by the standby, with its own error.
	refreshing, err := pgstore.New(rpool, opts(true))
	must(t, err)
	defer refreshing.Close()
	_, err = refreshing.Get(ctx, store.Namespace{"users", "u1", "memories"}, "m4")
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || pgErr.Code != "25006" { // read_only_sql_transaction
		t.Errorf("Get with refresh on read on the replica: %v, want SQLSTATE 25006", err)
	}
	err = replica.Put(ctx, store.Namespace{"users"}, "k", map[string]any{"text": "on a replica"})
	if !errors.As(err, &pgErr) || pgErr.Code != "25006" {
		t.Errorf("Put on the replica: %v, want SQLSTATE 25006", err)
	}
}
