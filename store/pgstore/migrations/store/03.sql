CREATE INDEX IF NOT EXISTS idx_store_expires_at ON {store} (expires_at) WHERE expires_at IS NOT NULL
