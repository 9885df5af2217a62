-- v0: memvault_meta, in a data database: memvault's facts about the
-- database itself, such as its id.
CREATE TABLE IF NOT EXISTS memvault_meta (
	name  TEXT PRIMARY KEY,
	value TEXT NOT NULL
);
