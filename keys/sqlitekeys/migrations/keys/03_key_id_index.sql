-- v3: writes check their sealing key by id (keys.ErasureTable.LiveKey).
CREATE INDEX IF NOT EXISTS memvault_data_keys_id ON memvault_data_keys (key_id);
