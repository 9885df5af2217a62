package redisstore_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/memvault/memvault/backends/redis/redisstore"
	"github.com/memvault/memvault/backends/redis/redistest"
	"github.com/memvault/memvault/serde"
	"github.com/memvault/memvault/store"
	"github.com/memvault/memvault/store/storetest"
)

// TestErasure: two stores on one prefix stand for two processes over one
// key table; puts of an erased subject are refused by the fence the
// engine checks under the store's lock, on both server versions.
func TestErasure(t *testing.T) {
	for _, v := range redistest.Versions {
		t.Run(fmt.Sprintf("redis%d", v), func(t *testing.T) {
			t.Parallel()
			srv := redistest.Shared(t, v)
			prefix := redistest.Prefix()
			storetest.RunErasure(t, nil, func(t *testing.T, s serde.Serializer) store.Store {
				return newStore(t, srv.Client(t), redisstore.Options{Prefix: prefix, Serde: s})
			})
		})
	}
}

// TestEmbedderGuard: a store refuses to open over vectors of another
// embedder (name or size), on both server versions.
func TestEmbedderGuard(t *testing.T) {
	for _, v := range redistest.Versions {
		t.Run(fmt.Sprintf("redis%d", v), func(t *testing.T) {
			t.Parallel()
			srv := redistest.Shared(t, v)
			prefix := redistest.Prefix()
			storetest.RunEmbedderGuard(t, func(t *testing.T, idx *store.IndexConfig) (store.Store, error) {
				return redisstore.New(context.Background(), srv.Client(t), redisstore.Options{Prefix: prefix, Index: idx})
			})
		})
	}
}
