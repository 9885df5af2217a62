-- v2: one row per erased subject, written in the transaction that destroys
-- the keys, so a killed erasure is finished by the next run. trace holds
-- fingerprints of the destroyed wrapped keys (keys.Fingerprint), never the
-- keys.
CREATE TABLE IF NOT EXISTS memvault_erasures (
	subject     TEXT    PRIMARY KEY,
	started_at  TEXT    NOT NULL,
	key_ids     TEXT    NOT NULL,
	trace       BLOB    NOT NULL,
	threads     INTEGER NOT NULL DEFAULT 0,
	items       INTEGER NOT NULL DEFAULT 0,
	done        INTEGER NOT NULL DEFAULT 0,
	finished_at TEXT,
	readmitted  INTEGER NOT NULL DEFAULT 0
) WITHOUT ROWID;
