-- v5: the sequence number of each row's first record (a row holds one
-- record, or a batch: its last in the columns, the others in more), unique:
-- two rows linked after the same record cannot both be stored. A read that
-- chains its own record after the last record it knows (audit.ChainRowTable)
-- fails on it when another appender got there first, whatever that one
-- stored — one record or a batch, whose first record's sequence number the
-- primary key does not hold.
CREATE UNIQUE INDEX IF NOT EXISTS memvault_audit_row_first ON memvault_audit (seq - coalesce(json_array_length(more), 0));
