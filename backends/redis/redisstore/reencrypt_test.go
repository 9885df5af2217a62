package redisstore_test

import (
	"fmt"
	"testing"

	"github.com/memvault/memvault/backends/redis/redisstore"
	"github.com/memvault/memvault/backends/redis/redistest"
	"github.com/memvault/memvault/serde"
	"github.com/memvault/memvault/store"
	"github.com/memvault/memvault/store/storetest"
)

// TestReencrypt runs the key-rotation case on both server versions: every
// store the case opens shares one prefix.
func TestReencrypt(t *testing.T) {
	for _, v := range redistest.Versions {
		t.Run(fmt.Sprintf("redis%d", v), func(t *testing.T) {
			t.Parallel()
			srv := redistest.Shared(t, v)
			prefix := redistest.Prefix()
			storetest.RunReencrypt(t, func(t *testing.T, s serde.Serializer) store.Store {
				return newStore(t, srv.Client(t), redisstore.Options{Prefix: prefix, Serde: s})
			})
		})
	}
}

var _ store.Reencrypter = (*redisstore.Store)(nil)
