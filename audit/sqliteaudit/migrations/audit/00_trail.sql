-- v0: the trail, one row per record (audit format 1).
CREATE TABLE IF NOT EXISTS memvault_audit (
	seq       INTEGER PRIMARY KEY,
	at        TEXT NOT NULL,
	principal TEXT NOT NULL,
	op        TEXT NOT NULL,
	target    TEXT NOT NULL,
	subject   TEXT NOT NULL,
	key_id    TEXT NOT NULL,
	mac       TEXT NOT NULL
);
