// Package pgkeys keeps memvault's wrapped data keys (keys.Table) in a
// PostgreSQL table — best in a schema or database of its own, with its
// own backups, so that a restored backup of the data cannot bring back a
// forgotten subject's keys. Destroy vacuums the table, so the deleted
// rows' bytes do not stay in its pages; base backups, WAL archives and
// replicas taken before keep them until they are themselves deleted.
//
// Setup creates the tables from the .sql files the package embeds
// (migrations/keys), through memvault's one PostgreSQL migration runner;
// SetupTx does it inside a transaction of the caller's, so that the key
// table appears with the caller's own schema changes or not at all.
package pgkeys
