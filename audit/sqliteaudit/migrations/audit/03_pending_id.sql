-- v3: the pending record a record was chained from (audit.Record.PendingID;
-- NULL for a record appended directly, and for every record chained
-- before), unique: a pending row copied and inserted again once chained
-- cannot be chained a second time. NULLs do not collide.
ALTER TABLE memvault_audit ADD COLUMN pending_id TEXT;
CREATE UNIQUE INDEX IF NOT EXISTS memvault_audit_pending_id ON memvault_audit (pending_id);
