-- v7: the erasures recorded before the table counted them (v6 counts from
-- StartErasure on) start the count, so that a backup of the table from
-- before one of them counts fewer and is refused (vault.ErrSubjectsChanged).
INSERT INTO {meta} (name, value)
	SELECT 'erasures', count(*)::text FROM {erasures}
ON CONFLICT (name) DO NOTHING;
