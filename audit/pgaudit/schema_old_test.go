package pgaudit

// oldStatements and oldMetaStatements are the setup statements of the
// build before the embedded .sql files (migrations/), copied verbatim from
// its Setup and migrateMeta: TestMigrationFiles holds the files to them,
// statement for statement. Never edit them.
func oldStatements(t *Table) []string {
	return []string{`CREATE TABLE IF NOT EXISTS ` + t.table + ` (
	seq       BIGINT PRIMARY KEY,
	at        TIMESTAMPTZ NOT NULL,
	principal TEXT NOT NULL,
	op        TEXT NOT NULL,
	target    TEXT NOT NULL,
	subject   TEXT NOT NULL,
	key_id    TEXT NOT NULL,
	mac       TEXT NOT NULL
)`,
		// v1: the hash chain (audit format 2); records of format 1 keep ''.
		`ALTER TABLE ` + t.table + ` ADD COLUMN IF NOT EXISTS link TEXT NOT NULL DEFAULT ''`,
	}
}

func oldMetaStatements(schema string) []string {
	return []string{`CREATE TABLE IF NOT EXISTS ` + metaTable(schema) + ` (
	name  TEXT PRIMARY KEY,
	value TEXT NOT NULL
)`}
}
