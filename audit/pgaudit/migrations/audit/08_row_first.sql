CREATE UNIQUE INDEX IF NOT EXISTS memvault_audit_row_first ON {audit} ((seq - coalesce(json_array_length(more::json), 0)))
