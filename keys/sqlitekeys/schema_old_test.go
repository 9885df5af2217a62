package sqlitekeys

// oldMigrations are the key table's schema steps of the build before they
// became embedded .sql files (migrations/), copied verbatim from its
// sqlite.go: TestSchemaUpgrade builds databases with them at every version
// and checks that the new runner opens and migrates them, and that both
// make the same schema byte for byte. Never edit them.
var oldMigrations = []string{`CREATE TABLE IF NOT EXISTS memvault_data_keys (
	subject    TEXT    NOT NULL,
	version    INTEGER NOT NULL,
	key_id     TEXT    NOT NULL,
	kek        TEXT    NOT NULL,
	wrapped    BLOB    NOT NULL,
	created_at TEXT    NOT NULL,
	PRIMARY KEY (subject, version)
) WITHOUT ROWID`,
	`CREATE TABLE IF NOT EXISTS memvault_thread_subjects (
	thread_id TEXT PRIMARY KEY,
	subject   TEXT NOT NULL
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS memvault_thread_subjects_subject ON memvault_thread_subjects (subject)`,
	// One row per erased subject: written in the transaction that destroys
	// the keys, so a killed erasure is finished by the next run. trace holds
	// fingerprints of the destroyed wrapped keys (keys.Fingerprint), never
	// the keys.
	`CREATE TABLE IF NOT EXISTS memvault_erasures (
	subject     TEXT    PRIMARY KEY,
	started_at  TEXT    NOT NULL,
	key_ids     TEXT    NOT NULL,
	trace       BLOB    NOT NULL,
	threads     INTEGER NOT NULL DEFAULT 0,
	items       INTEGER NOT NULL DEFAULT 0,
	done        INTEGER NOT NULL DEFAULT 0,
	finished_at TEXT,
	readmitted  INTEGER NOT NULL DEFAULT 0
) WITHOUT ROWID`,
	// Writes check their sealing key by id (keys.ErasureTable.LiveKey).
	`CREATE INDEX IF NOT EXISTS memvault_data_keys_id ON memvault_data_keys (key_id)`}
