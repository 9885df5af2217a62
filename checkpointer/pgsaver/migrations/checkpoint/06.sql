CREATE INDEX CONCURRENTLY IF NOT EXISTS checkpoints_thread_id_idx ON {checkpoints}(thread_id);
