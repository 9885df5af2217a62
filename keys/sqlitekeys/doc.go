// Package sqlitekeys keeps memvault's wrapped data keys (keys.Table) in a
// SQLite file — best its own file, apart from the data, so that a restored
// backup of the data cannot bring back a forgotten subject's keys.
// Destroyed keys are overwritten in the file (secure_delete) and the
// write-ahead log is truncated after each Destroy.
package sqlitekeys
