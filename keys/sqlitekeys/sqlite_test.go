package sqlitekeys_test

import (
	"path/filepath"
	"testing"

	"github.com/memvault/memvault/keys"
	"github.com/memvault/memvault/keys/keystest"
	"github.com/memvault/memvault/keys/sqlitekeys"
)

func TestConformance(t *testing.T) {
	keystest.Run(t, func(t *testing.T) keys.Table {
		tb, err := sqlitekeys.Open(t.Context(), filepath.Join(t.TempDir(), "keys.db"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { tb.Close() })
		return tb
	})
}
