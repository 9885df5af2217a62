// Package sqlitetest holds SQLite helpers for memvault's tests: StartReader
// starts another process holding a read transaction on a database file (as
// a long report or a backup tool reading the live file would), for tests of
// what a pinned snapshot keeps in the file.
//
// It is one of memvault's test kits (see package memvaulttest): for
// tests only.
package sqlitetest
