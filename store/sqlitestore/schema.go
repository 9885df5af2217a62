package sqlitestore

import (
	"context"
	"embed"
	"fmt"

	"github.com/memvault/memvault/internal/sqlitedb"
)

// component names this package's rows in memvault_migrations.
const component = "store"

// migrationFiles holds the schema steps, one file per step, run by
// sqlitedb.Migrate: migrations/store/NN_*.sql is step NN, recorded as
// memvault_migrations(component, v = NN) and applied in order once each.
// The tables mirror LangGraph's PostgreSQL store (store_migrations 0-3 and
// vector_migrations 1; LangGraph's SQLite store has no numbered
// migrations, so the numbering is memvault's); the rest is the search
// index's. Append new files; never edit a released one: the text of a
// CREATE statement is what sqlite_master keeps, and schema_test.go holds
// it to the steps of earlier builds.
//
//go:embed migrations/store/*.sql
var migrationFiles embed.FS

// migrations are the schema steps, in order.
var migrations = sqlitedb.MustLoad(migrationFiles, "migrations/store")

// oldVectors is the table migration 9 (migrations/store/09_vectors_rowid.sql)
// copies the vectors out of; dropOldVectors drops it.
const oldVectors = "store_vectors_v8"

// dropOldVectors drops the table the vectors were copied out of by
// migration 9, if it is there, then empties the write-ahead log.
//
// It is not part of the migration's transaction: with secure_delete the
// drop zeroes every page of the old table (a vector deleted later must not
// linger in a free page), and inside a transaction of several statements
// SQLite keeps the prior content of every page a statement changes in a
// statement journal, held in memory (temp_store=MEMORY): a peak RSS of
// 1.8 GB for 100 000 vectors of 1 536 dimensions, 35–80 MB with the drop
// outside. Run alone, in autocommit, it needs no statement journal. A
// process killed before or during it leaves the table behind, still
// holding copies of the vectors: the next Open drops it, before the store
// serves anything. The log grew by the copy and the drop (to 881 MB at
// that size) and SQLite reuses it but never shrinks it: it is truncated here,
// if no reader of another process holds it (else the last connection to
// close removes it).
func dropOldVectors(ctx context.Context, db *sqlitedb.DB) error {
	var n int
	if err := db.Reader().QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?`, oldVectors).Scan(&n); err != nil {
		return fmt.Errorf("sqlite: setup: %w", err)
	}
	if n == 0 {
		return nil
	}
	if _, err := db.Writer().ExecContext(ctx, `DROP TABLE IF EXISTS `+oldVectors); err != nil {
		return fmt.Errorf("sqlite: setup: drop %s: %w", oldVectors, err)
	}
	_, _ = db.Writer().ExecContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`)
	return nil
}
