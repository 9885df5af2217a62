package sqlitestore

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
	sqlitedbtest.CheckUpgrade(t, component, oldMigrations, migrations, func(ctx context.Context, path string) error {
		s, err := Open(ctx, path, Options{})
		if err != nil {
			return err
		}
		return s.Close()
	})
}
