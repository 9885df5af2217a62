-- v0: the wrapped data keys, one row per subject and version.
CREATE TABLE IF NOT EXISTS memvault_data_keys (
	subject    TEXT    NOT NULL,
	version    INTEGER NOT NULL,
	key_id     TEXT    NOT NULL,
	kek        TEXT    NOT NULL,
	wrapped    BLOB    NOT NULL,
	created_at TEXT    NOT NULL,
	PRIMARY KEY (subject, version)
) WITHOUT ROWID;
