-- v0: the tables of LangGraph's PostgreSQL store (store_migrations 0-3 and
-- vector_migrations 1): value is JSON text, embedding a BLOB of
-- little-endian float32s, and timestamps are INTEGER Unix nanoseconds (UTC)
-- computed by the store's clock. The primary key (prefix, key) serves
-- prefix searches as the text_pattern_ops index does in PostgreSQL;
-- store_vectors is clustered on it (WITHOUT ROWID), so a search scans the
-- vectors of a prefix as one contiguous range.
CREATE TABLE IF NOT EXISTS store (
		prefix TEXT NOT NULL,
		key TEXT NOT NULL,
		value TEXT NOT NULL,
		created_at INTEGER NOT NULL,
		updated_at INTEGER NOT NULL,
		expires_at INTEGER,
		ttl_minutes INTEGER,
		PRIMARY KEY (prefix, key)
	);
CREATE INDEX IF NOT EXISTS idx_store_expires_at ON store (expires_at) WHERE expires_at IS NOT NULL;
CREATE TABLE IF NOT EXISTS store_vectors (
		prefix TEXT NOT NULL,
		key TEXT NOT NULL,
		field_name TEXT NOT NULL,
		embedding BLOB,
		created_at INTEGER NOT NULL,
		updated_at INTEGER NOT NULL,
		PRIMARY KEY (prefix, key, field_name),
		FOREIGN KEY (prefix, key) REFERENCES store (prefix, key) ON DELETE CASCADE
	) WITHOUT ROWID;
