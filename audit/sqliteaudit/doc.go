// Package sqliteaudit keeps memvault's audit trail (audit.Table) in a SQLite
// file — best its own, or the key table's, apart from the data.
package sqliteaudit
