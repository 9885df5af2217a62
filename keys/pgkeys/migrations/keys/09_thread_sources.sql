-- v9: which thread each copy of a thread was made from (metadata mode,
-- keys.ThreadTable.FollowThread): an erasure of the subject a source is
-- bound to reaches its copies, copies of copies included, also those made
-- before the source was bound.
CREATE TABLE IF NOT EXISTS {thread_sources} (
	thread_id TEXT NOT NULL,
	source    TEXT NOT NULL,
	PRIMARY KEY (thread_id, source)
);
