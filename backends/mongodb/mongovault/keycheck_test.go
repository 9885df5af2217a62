package mongovault_test

import (
	"testing"

	"github.com/memvault/memvault/backends/mongodb/mongotest"
	"github.com/memvault/memvault/vault/vaulttest"
)

func TestMain(m *testing.M) { mongotest.Main(m) }

// TestStoreOnlyKeyCheck: a MongoDB database holding only sealed memories,
// opened without their key, is refused (vaulttest.StoreOnlyKeyCheck).
func TestStoreOnlyKeyCheck(t *testing.T) {
	vaulttest.StoreOnlyKeyCheck(t, map[string]string{"MEMVAULT_DSN": mongotest.URI(t), "MEMVAULT_SCHEMA": mongotest.Database(t).Name()})
}
