package sqliteaudit

// oldMigrations and oldMetaMigrations are the schema steps of the build
// before they became embedded .sql files (migrations/), copied verbatim
// from its sqlite.go: TestSchemaUpgrade builds databases with them at every
// version and checks that the new runner opens and migrates them, and that
// both make the same schema byte for byte. Never edit them.
var oldMigrations = []string{`CREATE TABLE IF NOT EXISTS memvault_audit (
	seq       INTEGER PRIMARY KEY,
	at        TEXT NOT NULL,
	principal TEXT NOT NULL,
	op        TEXT NOT NULL,
	target    TEXT NOT NULL,
	subject   TEXT NOT NULL,
	key_id    TEXT NOT NULL,
	mac       TEXT NOT NULL
)`,
	// v1: the hash chain (audit format 2); records of format 1 keep ''.
	`ALTER TABLE memvault_audit ADD COLUMN link TEXT NOT NULL DEFAULT ''`,
}

var oldMetaMigrations = []string{`CREATE TABLE IF NOT EXISTS memvault_meta (
	name  TEXT PRIMARY KEY,
	value TEXT NOT NULL
)`}
