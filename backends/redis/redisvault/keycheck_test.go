package redisvault_test

import (
	"testing"

	"github.com/memvault/memvault/backends/redis/redistest"
	_ "github.com/memvault/memvault/backends/redis/redisvault"
	"github.com/memvault/memvault/vault/vaulttest"
)

func TestMain(m *testing.M) { redistest.Main(m) }

// TestStoreOnlyKeyCheck: a Redis database holding only sealed memories,
// opened without their key, is refused (vaulttest.StoreOnlyKeyCheck).
func TestStoreOnlyKeyCheck(t *testing.T) {
	srv := redistest.Shared(t, 8)
	vaulttest.StoreOnlyKeyCheck(t, map[string]string{"MEMVAULT_DSN": "redis://" + srv.Addr, "MEMVAULT_SCHEMA": redistest.Prefix()})
}
