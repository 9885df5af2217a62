-- v7: which thread each copy of a thread was made from (metadata mode,
-- keys.ThreadTable.FollowThread): an erasure of the subject a source is
-- bound to reaches its copies, copies of copies included, also those made
-- before the source was bound.
CREATE TABLE IF NOT EXISTS memvault_thread_sources (
	thread_id TEXT NOT NULL,
	source    TEXT NOT NULL,
	PRIMARY KEY (thread_id, source)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS memvault_thread_sources_source ON memvault_thread_sources (source);
