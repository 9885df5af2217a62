// Package pgaudit keeps memvault's audit trail (audit.Table) in a
// PostgreSQL table — best in a schema (or database) of its own, which the
// application's role may insert into and read but not update or delete.
//
// Setup creates the table from the .sql files the package embeds
// (migrations/audit), through memvault's one PostgreSQL migration runner;
// SetupTx does it inside a transaction of the caller's, so that the trail
// appears with the caller's own schema changes or not at all.
package pgaudit
