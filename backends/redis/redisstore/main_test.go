package redisstore_test

import (
	"context"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/memvault/memvault/backends/redis/redisstore"
	"github.com/memvault/memvault/backends/redis/redistest"
)

func TestMain(m *testing.M) { redistest.Main(m) }

// newStore returns a Store under a prefix of its own through rdb.
func newStore(t testing.TB, rdb redis.UniversalClient, opt redisstore.Options) *redisstore.Store {
	t.Helper()
	if opt.Prefix == "" {
		opt.Prefix = redistest.Prefix()
	}
	s, err := redisstore.New(context.Background(), rdb, opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}
