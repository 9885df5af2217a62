-- v10: an erasure walks from a thread to its copies.
CREATE INDEX IF NOT EXISTS memvault_thread_sources_source ON {thread_sources} (source);
