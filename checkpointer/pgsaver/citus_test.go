package pgsaver_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/checkpointer/checkpointertest"
	"github.com/memvault/memvault/checkpointer/pgsaver"
	"github.com/memvault/memvault/keys/pgkeys"
	"github.com/memvault/memvault/memvaulttest/pgtest"
	"github.com/memvault/memvault/serde"
)

// The Citus tests run the saver on a real Citus cluster (a coordinator and
// two workers, pgtest.CitusSchema), where Setup distributes the tables by
// thread_id. They skip without Citus installed and fail instead when
// MEMVAULT_REQUIRE_CITUS=1 (CI); `go test -run Citus` runs exactly them.

// newCitusSaver is newSaver on the Citus coordinator.
func newCitusSaver(t testing.TB, opts pgsaver.Options) (*pgsaver.Saver, *pgxpool.Pool) {
	t.Helper()
	pool, _ := pgtest.CitusSchema(t)
	s, err := pgsaver.New(pool, opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Setup(context.Background()); err != nil {
		t.Fatal(err)
	}
	return s, pool
}

func TestConformanceCitus(t *testing.T) {
	checkpointertest.Run(t, func(t *testing.T) checkpointer.Saver {
		s, _ := newCitusSaver(t, pgsaver.Options{})
		return s
	})
}

func TestConformanceCitusEncrypted(t *testing.T) {
	checkpointertest.Run(t, func(t *testing.T) checkpointer.Saver {
		s, _ := newCitusSaver(t, pgsaver.Options{Serde: encrypted(t)})
		return s
	})
}

// TestErasureCitus runs the erasure suite with the key table in the same
// database: a table local to the coordinator, which every writer's
// transaction locks (keys.SQLFencer) beside its distributed rows.
func TestErasureCitus(t *testing.T) {
	pool, schema := pgtest.CitusSchema(t)
	kt, err := pgkeys.New(pool, pgkeys.Options{Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	if err := kt.Setup(t.Context()); err != nil {
		t.Fatal(err)
	}
	checkpointertest.RunErasure(t, kt, func(t *testing.T, s serde.Serializer) checkpointer.Saver {
		sv, err := pgsaver.New(pool, pgsaver.Options{Serde: s})
		if err != nil {
			t.Fatal(err)
		}
		if err := sv.Setup(context.Background()); err != nil {
			t.Fatal(err)
		}
		return sv
	})
}

func TestReencryptCitus(t *testing.T) {
	pool, _ := pgtest.CitusSchema(t)
	checkpointertest.RunReencrypt(t, func(t *testing.T, s serde.Serializer) checkpointer.Saver {
		sv, err := pgsaver.New(pool, pgsaver.Options{Serde: s})
		if err != nil {
			t.Fatal(err)
		}
		if err := sv.Setup(context.Background()); err != nil {
			t.Fatal(err)
		}
		return sv
	})
}
