CREATE TABLE IF NOT EXISTS {erasures} (
	subject     TEXT        PRIMARY KEY,
	started_at  TIMESTAMPTZ NOT NULL,
	key_ids     TEXT[]      NOT NULL,
	trace       BYTEA       NOT NULL,
	threads     INTEGER     NOT NULL DEFAULT 0,
	items       INTEGER     NOT NULL DEFAULT 0,
	done        BOOLEAN     NOT NULL DEFAULT false,
	finished_at TIMESTAMPTZ,
	readmitted  BOOLEAN     NOT NULL DEFAULT false
);
