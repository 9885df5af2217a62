CREATE UNIQUE INDEX IF NOT EXISTS memvault_audit_pending_id ON {audit} (pending_id)
