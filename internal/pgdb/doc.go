// Package pgdb is what memvault's PostgreSQL packages share over pgx: the
// contract cores and internal/rotate run shared statements through
// sqlexec.DB without importing pgx, and Exec is that interface over a pgx
// pool, connection or transaction.
package pgdb
