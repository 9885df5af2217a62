package pgkeys_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/memvault/memvault/internal/pgmigrate"
	"github.com/memvault/memvault/keys"
	"github.com/memvault/memvault/keys/pgkeys"
	"github.com/memvault/memvault/memvaulttest/pgtest"
)

// TestSetupTx creates the key table inside a caller's transaction: rolled
// back, nothing of it exists (schema, tables, fence function, migration
// records); committed, the table works and Setup finds it set up.
func TestSetupTx(t *testing.T) {
	ctx := context.Background()
	pool, schema := pgtest.Schema(t)
	apart := schema + "_tx"
	t.Cleanup(func() {
		_, _ = pool.Exec(context.Background(), `DROP SCHEMA IF EXISTS `+pgx.Identifier{apart}.Sanitize()+` CASCADE`)
	})
	for _, s := range []string{schema, apart} {
		tb, err := pgkeys.New(pool, pgkeys.Options{Schema: s})
		if err != nil {
			t.Fatal(err)
		}
		if err := tb.SetupTx(ctx, nil); !errors.Is(err, pgkeys.ErrNilTx) {
			t.Fatalf("SetupTx(nil) = %v, want ErrNilTx", err)
		}
		tx, err := pool.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if err := tb.SetupTx(ctx, tx); err != nil {
			t.Fatal(err)
		}
		// Inside the transaction the table is there.
		if n := objects(t, tx, s); n != 7 {
			t.Fatalf("schema %s: %d objects inside the transaction, want 7", s, n)
		}
		if err := tx.Rollback(ctx); err != nil {
			t.Fatal(err)
		}
		if n := objects(t, pool, s); n != 0 {
			t.Fatalf("schema %s: %d objects after rollback, want none", s, n)
		}
		if s == apart {
			var exists bool
			if err := pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = $1)`, apart).Scan(&exists); err != nil || exists {
				t.Fatalf("schema %s after rollback: exists %v, %v", apart, exists, err)
			}
		}

		if err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error { return tb.SetupTx(ctx, tx) }); err != nil {
			t.Fatal(err)
		}
		if n := objects(t, pool, s); n != 7 {
			t.Fatalf("schema %s: %d objects after commit, want 7", s, n)
		}
		v, err := pgmigrate.Versions(ctx, pool, s, "memvault_keys_migrations")
		if err != nil || v["memvault_keys_migrations"] != 10 {
			t.Fatalf("schema %s: versions %v, %v; want v10", s, v, err)
		}
		if err := tb.Setup(ctx); err != nil {
			t.Fatalf("Setup after SetupTx: %v", err)
		}
		k := keys.WrappedKey{Subject: "user:1", Version: 1, ID: "k1", KEK: "kek", Wrapped: []byte("wrapped"), Created: time.Unix(1, 0).UTC()}
		if err := tb.Insert(ctx, k); err != nil {
			t.Fatal(err)
		}
		got, err := tb.Keys(ctx, "user:1")
		if err != nil || len(got) != 1 || got[0].ID != "k1" {
			t.Fatalf("Keys = %v, %v", got, err)
		}
		// The fence function works on the committed table.
		if err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
			_, err := tx.Exec(ctx, tb.FenceSQL(), "user:1", "k1")
			return err
		}); err != nil {
			t.Fatalf("fence on a live key: %v", err)
		}
	}
}

// objects counts the key table's tables and fence function in schema.
func objects(t *testing.T, q interface {
	QueryRow(context.Context, string, ...any) pgx.Row
}, schema string) int {
	t.Helper()
	var n int
	err := q.QueryRow(context.Background(), `SELECT
	(SELECT count(*) FROM pg_class c JOIN pg_namespace ns ON ns.oid = c.relnamespace
	 WHERE ns.nspname = $1 AND c.relname IN ('memvault_data_keys', 'memvault_thread_subjects', 'memvault_thread_sources', 'memvault_erasures', 'memvault_keys_meta', 'memvault_keys_migrations'))
	+ (SELECT count(*) FROM pg_proc p JOIN pg_namespace ns ON ns.oid = p.pronamespace
	 WHERE ns.nspname = $1 AND p.proname = 'memvault_key_fence')`, schema).Scan(&n)
	if err != nil {
		t.Fatal(err)
	}
	return n
}
