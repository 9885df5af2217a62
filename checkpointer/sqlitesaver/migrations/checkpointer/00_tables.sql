-- v0: the three tables of LangGraph's PostgreSQL checkpointer (its
-- migrations 1-4 and 9): JSONB columns are JSON text, BYTEA columns BLOBs.
-- The primary keys lead with thread_id, which makes PostgreSQL's separate
-- thread_id indexes (its migrations 6-8) unnecessary.
CREATE TABLE IF NOT EXISTS checkpoints (
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
	);
