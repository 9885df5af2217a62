// Package pgcitus is what memvault's PostgreSQL backends share on Citus
// (distributed PostgreSQL): whether the database is a Citus coordinator,
// and the distribution of a backend's tables by Setup. Which tables, by
// which column, and which statements differ on Citus stay with each
// backend (checkpointer/pgsaver, store/pgstore).
package pgcitus
