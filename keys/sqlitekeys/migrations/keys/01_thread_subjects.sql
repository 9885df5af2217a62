-- v1: the subject each thread is bound to (keys.ThreadTable).
CREATE TABLE IF NOT EXISTS memvault_thread_subjects (
	thread_id TEXT PRIMARY KEY,
	subject   TEXT NOT NULL
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS memvault_thread_subjects_subject ON memvault_thread_subjects (subject);
