-- The tables exactly as Python LangGraph's PostgresSaver.setup()
-- (langgraph-checkpoint-postgres 3.1.2) leaves them: its MIGRATIONS 0..9 run in
-- order, each recorded in checkpoint_migrations. Unqualified names: the
-- schema comes from search_path, as in Python.

CREATE TABLE IF NOT EXISTS checkpoint_migrations (
    v INTEGER PRIMARY KEY
);
INSERT INTO checkpoint_migrations (v) VALUES (0);
CREATE TABLE IF NOT EXISTS checkpoints (
    thread_id TEXT NOT NULL,
    checkpoint_ns TEXT NOT NULL DEFAULT '',
    checkpoint_id TEXT NOT NULL,
    parent_checkpoint_id TEXT,
    type TEXT,
    checkpoint JSONB NOT NULL,
    metadata JSONB NOT NULL DEFAULT '{}',
    PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id)
);
INSERT INTO checkpoint_migrations (v) VALUES (1);
CREATE TABLE IF NOT EXISTS checkpoint_blobs (
    thread_id TEXT NOT NULL,
    checkpoint_ns TEXT NOT NULL DEFAULT '',
    channel TEXT NOT NULL,
    version TEXT NOT NULL,
    type TEXT NOT NULL,
    blob BYTEA,
    PRIMARY KEY (thread_id, checkpoint_ns, channel, version)
);
INSERT INTO checkpoint_migrations (v) VALUES (2);
CREATE TABLE IF NOT EXISTS checkpoint_writes (
    thread_id TEXT NOT NULL,
    checkpoint_ns TEXT NOT NULL DEFAULT '',
    checkpoint_id TEXT NOT NULL,
    task_id TEXT NOT NULL,
    idx INTEGER NOT NULL,
    channel TEXT NOT NULL,
    type TEXT,
    blob BYTEA NOT NULL,
    PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id, task_id, idx)
);
INSERT INTO checkpoint_migrations (v) VALUES (3);
ALTER TABLE checkpoint_blobs ALTER COLUMN blob DROP not null;
INSERT INTO checkpoint_migrations (v) VALUES (4);
SELECT 1;
INSERT INTO checkpoint_migrations (v) VALUES (5);
CREATE INDEX CONCURRENTLY IF NOT EXISTS checkpoints_thread_id_idx ON checkpoints(thread_id);
INSERT INTO checkpoint_migrations (v) VALUES (6);
CREATE INDEX CONCURRENTLY IF NOT EXISTS checkpoint_blobs_thread_id_idx ON checkpoint_blobs(thread_id);
INSERT INTO checkpoint_migrations (v) VALUES (7);
CREATE INDEX CONCURRENTLY IF NOT EXISTS checkpoint_writes_thread_id_idx ON checkpoint_writes(thread_id);
INSERT INTO checkpoint_migrations (v) VALUES (8);
ALTER TABLE checkpoint_writes ADD COLUMN IF NOT EXISTS task_path TEXT NOT NULL DEFAULT '';
INSERT INTO checkpoint_migrations (v) VALUES (9);
