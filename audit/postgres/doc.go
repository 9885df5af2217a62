// Package postgres keeps memvault's audit trail (audit.Table) in a
// PostgreSQL table — best in a schema (or database) of its own, which the
// application's role may insert into and read but not update or delete.
package postgres
