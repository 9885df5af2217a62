CREATE INDEX IF NOT EXISTS memvault_data_keys_id ON {data_keys} (key_id);
