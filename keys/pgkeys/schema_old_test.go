package pgkeys

import "github.com/memvault/memvault/keys"

// oldStatements are the key table's setup statements as the build before
// the embedded .sql files (migrations/) built them, copied verbatim from
// its Setup: TestMigrationFiles holds the files to them, statement for
// statement. Never edit them.
func oldStatements(t *Table) []string {
	return []string{`CREATE TABLE IF NOT EXISTS ` + t.table + ` (
	subject    TEXT        NOT NULL,
	version    INTEGER     NOT NULL,
	key_id     TEXT        NOT NULL,
	kek        TEXT        NOT NULL,
	wrapped    BYTEA       NOT NULL,
	created_at TIMESTAMPTZ NOT NULL,
	PRIMARY KEY (subject, version)
)`, `CREATE TABLE IF NOT EXISTS ` + t.threads + ` (
	thread_id TEXT PRIMARY KEY,
	subject   TEXT NOT NULL
)`, `CREATE INDEX IF NOT EXISTS memvault_thread_subjects_subject ON ` + t.threads + ` (subject)`,
		// One row per erased subject, written in the transaction that
		// destroys the keys; trace is that transaction's id (xid8), which
		// Purge waits for every snapshot to pass.
		`CREATE TABLE IF NOT EXISTS ` + t.erasures + ` (
	subject     TEXT        PRIMARY KEY,
	started_at  TIMESTAMPTZ NOT NULL,
	key_ids     TEXT[]      NOT NULL,
	trace       BYTEA       NOT NULL,
	threads     INTEGER     NOT NULL DEFAULT 0,
	items       INTEGER     NOT NULL DEFAULT 0,
	done        BOOLEAN     NOT NULL DEFAULT false,
	finished_at TIMESTAMPTZ,
	readmitted  BOOLEAN     NOT NULL DEFAULT false
)`,
		// The write fence (keys.SQLFencer): a write holds its sealing key's
		// row FOR SHARE until it commits, so StartErasure's DELETE waits for
		// it, and a write after the DELETE finds no row and fails.
		`CREATE OR REPLACE FUNCTION ` + t.fence + `(p_subject TEXT, p_key_id TEXT) RETURNS void LANGUAGE plpgsql AS $fence$
BEGIN
	PERFORM 1 FROM ` + t.table + ` WHERE key_id = p_key_id FOR SHARE;
	IF NOT FOUND THEN
		RAISE EXCEPTION 'memvault: data key % of subject % was destroyed (the subject was erased)', p_key_id, p_subject
			USING ERRCODE = '` + keys.FenceSQLState + `';
	END IF;
END
$fence$`,
		// Writes check and hold their sealing key by id.
		`CREATE INDEX IF NOT EXISTS memvault_data_keys_id ON ` + t.table + ` (key_id)`}
}
