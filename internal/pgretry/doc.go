// Package pgretry retries a PostgreSQL transaction that the server aborted
// to break a deadlock (SQLSTATE 40P01) or a serialization conflict (40001):
// both leave nothing behind and succeed when run again.
//
// Only a transaction the library owns may be retried: one the caller passed
// in (the …Tx methods) is aborted as a whole, so the error goes back to the
// caller, who owns the retry.
package pgretry
