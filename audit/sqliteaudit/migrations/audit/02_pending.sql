-- v2: records made durable (in the audited write's own transaction, when
-- the trail lives in the data file) but not yet linked into the chain.
CREATE TABLE IF NOT EXISTS memvault_audit_pending (
	id        TEXT PRIMARY KEY,
	at        TEXT NOT NULL,
	principal TEXT NOT NULL,
	op        TEXT NOT NULL,
	target    TEXT NOT NULL,
	subject   TEXT NOT NULL,
	key_id    TEXT NOT NULL,
	mac       TEXT NOT NULL
);
