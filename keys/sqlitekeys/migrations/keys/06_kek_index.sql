-- v6: Open lists the KEKs the keys are wrapped by (keys.KEKLister), one
-- index lookup per distinct KEK, to refuse a wrong master key.
CREATE INDEX IF NOT EXISTS memvault_data_keys_kek ON memvault_data_keys (kek);
