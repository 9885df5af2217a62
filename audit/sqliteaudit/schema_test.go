package sqliteaudit

import (
	"context"
	"testing"

	"github.com/memvault/memvault/internal/sqlitedb/sqlitedbtest"
)

// TestSchemaUpgrade holds the embedded migration files to the steps the
// build before them ran (schema_old_test.go): the same schema byte for
// byte and the same version records, databases the earlier build left at
// each version open and migrate, and the earlier build leaves a database
// the new one made as it is.
func TestSchemaUpgrade(t *testing.T) {
	t.Run("audit", func(t *testing.T) {
		sqlitedbtest.CheckUpgrade(t, "audit", oldMigrations, migrations, func(ctx context.Context, path string) error {
			tbl, err := Open(ctx, path)
			if err != nil {
				return err
			}
			return tbl.Close()
		})
	})
	t.Run("meta", func(t *testing.T) {
		sqlitedbtest.CheckUpgrade(t, "meta", oldMetaMigrations, metaMigrations, func(ctx context.Context, path string) error {
			_, err := DatabaseID(ctx, path)
			return err
		})
	})
}
