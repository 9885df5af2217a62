-- v4: the chainer and Check read pending records by time, then id. Times
-- are RFC 3339 text of varying fractions, compared as julian days.
CREATE INDEX IF NOT EXISTS memvault_audit_pending_at ON memvault_audit_pending (julianday(at), id);
