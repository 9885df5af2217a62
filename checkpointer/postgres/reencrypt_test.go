package postgres_test

import (
	"context"
	"testing"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/checkpointer/checkpointertest"
	"github.com/memvault/memvault/checkpointer/postgres"
	"github.com/memvault/memvault/internal/pgtest"
	"github.com/memvault/memvault/serde"
)

func TestReencrypt(t *testing.T) {
	pool := pgtest.Pool(t)
	checkpointertest.RunReencrypt(t, func(t *testing.T, s serde.Serializer) checkpointer.Saver {
		sv, err := postgres.New(pool, postgres.Options{Serde: s})
		if err != nil {
			t.Fatal(err)
		}
		if err := sv.Setup(context.Background()); err != nil {
			t.Fatal(err)
		}
		return sv
	})
}
