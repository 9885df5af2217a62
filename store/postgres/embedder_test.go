package postgres_test

import (
	"context"
	"testing"

	"github.com/memvault/memvault/internal/pgtest"
	"github.com/memvault/memvault/store"
	"github.com/memvault/memvault/store/postgres"
	"github.com/memvault/memvault/store/storetest"
)

func TestEmbedderGuard(t *testing.T) {
	pool := pgtest.Pool(t)
	storetest.RunEmbedderGuard(t, func(t *testing.T, idx *store.IndexConfig) (store.Store, error) {
		st, err := postgres.New(pool, postgres.Options{Index: idx})
		if err != nil {
			return nil, err
		}
		if err := st.Setup(context.Background()); err != nil {
			st.Close()
			return nil, err
		}
		return st, nil
	})
}
