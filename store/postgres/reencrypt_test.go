package postgres_test

import (
	"context"
	"testing"

	"github.com/memvault/memvault/internal/pgtest"
	"github.com/memvault/memvault/serde"
	"github.com/memvault/memvault/store"
	"github.com/memvault/memvault/store/postgres"
	"github.com/memvault/memvault/store/storetest"
)

func TestReencrypt(t *testing.T) {
	pool := pgtest.Pool(t)
	storetest.RunReencrypt(t, func(t *testing.T, s serde.Serializer) store.Store {
		st, err := postgres.New(pool, postgres.Options{Serde: s})
		if err != nil {
			t.Fatal(err)
		}
		if err := st.Setup(context.Background()); err != nil {
			t.Fatal(err)
		}
		return st
	})
}
