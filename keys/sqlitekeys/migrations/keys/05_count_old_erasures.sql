-- v5: the erasures recorded before the table counted them (v4 counts from
-- StartErasure on) start the count, so that a backup of the table from
-- before one of them counts fewer and is refused (vault.ErrSubjectsChanged).
INSERT OR IGNORE INTO memvault_keys_meta (name, value)
	SELECT 'erasures', CAST(count(*) AS TEXT) FROM memvault_erasures;
