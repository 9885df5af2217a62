package pgstore_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/memvault/memvault/memvaulttest/pgtest"
	"github.com/memvault/memvault/store/pgstore"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// open returns a set-up store in a fresh schema, and its pool.
func open(t testing.TB, opts pgstore.Options) (*pgstore.Store, *pgxpool.Pool) {
	t.Helper()
	pool := pgtest.Pool(t)
	s, err := pgstore.New(pool, opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	if err := s.Setup(context.Background()); err != nil {
		t.Fatalf("Setup: %v", err)
	}
	return s, pool
}

// openSimpleProtocol is open on a pool in pgx's simple protocol, the mode
// for PgBouncer's transaction pooling (no prepared statements, no binary
// parameters).
func openSimpleProtocol(t testing.TB, opts pgstore.Options) *pgstore.Store {
	t.Helper()
	cfg := pgtest.Pool(t).Config()
	cfg.ConnConfig.DefaultQueryExecMode = pgx.QueryExecModeSimpleProtocol
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	s, err := pgstore.New(pool, opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	if err := s.Setup(context.Background()); err != nil {
		t.Fatalf("Setup: %v", err)
	}
	return s
}
