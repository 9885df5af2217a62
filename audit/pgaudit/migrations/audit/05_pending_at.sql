CREATE INDEX IF NOT EXISTS memvault_audit_pending_at ON {pending} (at, id)
