CREATE INDEX IF NOT EXISTS memvault_thread_subjects_subject ON {thread_subjects} (subject);
