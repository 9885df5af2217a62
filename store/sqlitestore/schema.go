package sqlitestore

import (
	"embed"

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
