-- v4 (trail storage format 3): a row may hold a batch of records — the
-- records chained from one pending row of a batch of concurrent reads'
-- records, and that pending row itself. The row's columns hold its last
-- record (its first's pending id in pending_id), more the records before
-- it as JSON (NULL for a row of one record). See audit/internal/batchrow.
ALTER TABLE memvault_audit ADD COLUMN more TEXT;
ALTER TABLE memvault_audit_pending ADD COLUMN more TEXT;
