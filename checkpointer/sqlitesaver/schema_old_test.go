package sqlitesaver

// oldMigrations are the schema steps of the build before they became
// embedded .sql files (migrations/), copied verbatim from its schema.go:
// TestSchemaUpgrade builds databases with them at every version and checks
// that the new runner opens and migrates them, and that both make the same
// schema byte for byte. Never edit them.
var oldMigrations = []string{
	// v0: the three tables.
	`CREATE TABLE IF NOT EXISTS checkpoints (
		thread_id TEXT NOT NULL,
		checkpoint_ns TEXT NOT NULL DEFAULT '',
		checkpoint_id TEXT NOT NULL,
		parent_checkpoint_id TEXT,
		type TEXT,
		checkpoint TEXT NOT NULL,
		metadata TEXT NOT NULL DEFAULT '{}',
		PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id)
	);
	CREATE TABLE IF NOT EXISTS checkpoint_blobs (
		thread_id TEXT NOT NULL,
		checkpoint_ns TEXT NOT NULL DEFAULT '',
		channel TEXT NOT NULL,
		version TEXT NOT NULL,
		type TEXT NOT NULL,
		blob BLOB,
		PRIMARY KEY (thread_id, checkpoint_ns, channel, version)
	);
	CREATE TABLE IF NOT EXISTS checkpoint_writes (
		thread_id TEXT NOT NULL,
		checkpoint_ns TEXT NOT NULL DEFAULT '',
		checkpoint_id TEXT NOT NULL,
		task_id TEXT NOT NULL,
		idx INTEGER NOT NULL,
		channel TEXT NOT NULL,
		type TEXT,
		blob BLOB NOT NULL,
		task_path TEXT NOT NULL DEFAULT '',
		PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id, task_id, idx)
	)`,
	// v1: DeleteForRuns finds checkpoints by metadata.run_id.
	`CREATE INDEX IF NOT EXISTS checkpoints_run_id_idx ON checkpoints (json_extract(metadata, '$.run_id'))`,
}
