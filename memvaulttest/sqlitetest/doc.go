// Package sqlitetest holds SQLite helpers for memvault's tests: StartReader
// starts another process holding a read transaction on a database file (as
// a long report or a backup tool reading the live file would), for tests of
// what a pinned snapshot keeps in the file; BusyTimeout lengthens the
// busy_timeout of the process's connections, for tests of several
// processes sharing a file on a loaded machine.
//
// It is one of memvault's test kits (see package memvaulttest): for
// tests only.
package sqlitetest
