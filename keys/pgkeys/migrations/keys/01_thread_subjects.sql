CREATE TABLE IF NOT EXISTS {thread_subjects} (
	thread_id TEXT PRIMARY KEY,
	subject   TEXT NOT NULL
);
