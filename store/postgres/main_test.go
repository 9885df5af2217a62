package postgres_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/memvault/memvault/internal/pgtest"
	"github.com/memvault/memvault/store/postgres"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// open returns a set-up store in a fresh schema, and its pool.
func open(t testing.TB, opts postgres.Options) (*postgres.Store, *pgxpool.Pool) {
	t.Helper()
	pool := pgtest.Pool(t)
	s, err := postgres.New(pool, opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	if err := s.Setup(context.Background()); err != nil {
		t.Fatalf("Setup: %v", err)
	}
	return s, pool
}
