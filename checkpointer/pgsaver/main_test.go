package pgsaver_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/memvault/memvault/checkpointer/pgsaver"
	"github.com/memvault/memvault/memvaulttest/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// newSaver returns a set-up Saver over a fresh schema of its own, and the
// pool under it.
func newSaver(t testing.TB, opts pgsaver.Options) (*pgsaver.Saver, *pgxpool.Pool) {
	t.Helper()
	pool := pgtest.Pool(t)
	s, err := pgsaver.New(pool, opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Setup(context.Background()); err != nil {
		t.Fatal(err)
	}
	return s, pool
}
