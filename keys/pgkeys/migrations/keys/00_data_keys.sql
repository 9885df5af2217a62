CREATE TABLE IF NOT EXISTS {data_keys} (
	subject    TEXT        NOT NULL,
	version    INTEGER     NOT NULL,
	key_id     TEXT        NOT NULL,
	kek        TEXT        NOT NULL,
	wrapped    BYTEA       NOT NULL,
	created_at TIMESTAMPTZ NOT NULL,
	PRIMARY KEY (subject, version)
);
