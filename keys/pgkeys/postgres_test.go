package pgkeys_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/memvault/memvault/keys"
	"github.com/memvault/memvault/keys/keystest"
	"github.com/memvault/memvault/keys/pgkeys"
	"github.com/memvault/memvault/memvaulttest/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// TestConformance runs the suite on a table in a schema apart from the
// search path's, as a key table kept apart from the data would be.
func TestConformance(t *testing.T) {
	keystest.Run(t, func(t *testing.T) keys.Table {
		pool, schema := pgtest.Schema(t)
		apart := schema + "_keys"
		t.Cleanup(func() {
			_, _ = pool.Exec(context.Background(), `DROP SCHEMA IF EXISTS `+pgx.Identifier{apart}.Sanitize()+` CASCADE`)
		})
		tb, err := pgkeys.New(pool, pgkeys.Options{Schema: apart})
		if err != nil {
			t.Fatal(err)
		}
		if err := tb.Setup(t.Context()); err != nil {
			t.Fatal(err)
		}
		return tb
	})
}
