-- v5: the pending records' table keyed by its id alone (WITHOUT ROWID):
-- one b-tree instead of a row table and the index of its TEXT primary
-- key, so that the record an audited write inserts in its own
-- transaction dirties one page of the file, not two. Same name and
-- columns: statements of earlier builds run on it unchanged.
CREATE TABLE memvault_audit_pending_v5 (
	id        TEXT PRIMARY KEY,
	at        TEXT NOT NULL,
	principal TEXT NOT NULL,
	op        TEXT NOT NULL,
	target    TEXT NOT NULL,
	subject   TEXT NOT NULL,
	key_id    TEXT NOT NULL,
	mac       TEXT NOT NULL,
	more      TEXT
) WITHOUT ROWID;
INSERT INTO memvault_audit_pending_v5 (id, at, principal, op, target, subject, key_id, mac, more)
	SELECT id, at, principal, op, target, subject, key_id, mac, more FROM memvault_audit_pending;
DROP TABLE memvault_audit_pending;
ALTER TABLE memvault_audit_pending_v5 RENAME TO memvault_audit_pending;
