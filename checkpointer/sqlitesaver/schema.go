package sqlitesaver

import (
	"embed"

	"github.com/memvault/memvault/internal/sqlitedb"
)

// component names this package's rows in memvault_migrations.
const component = "checkpointer"

// migrationFiles holds the schema steps, one file per step, run by
// sqlitedb.Migrate: migrations/checkpointer/NN_*.sql is step NN, recorded
// as memvault_migrations(component, v = NN) and applied in order once
// each. The tables, columns and primary keys mirror LangGraph's PostgreSQL
// checkpointer (checkpoint_migrations 1-4 and 9; LangGraph's SQLite saver
// has no numbered migrations, so the numbering is memvault's). Append new
// files; never edit a released one: the text of a CREATE statement is
// what sqlite_master keeps, and schema_test.go holds it to the steps of
// earlier builds.
//
//go:embed migrations/checkpointer/*.sql
var migrationFiles embed.FS

// migrations are the schema steps, in order.
var migrations = sqlitedb.MustLoad(migrationFiles, "migrations/checkpointer")
