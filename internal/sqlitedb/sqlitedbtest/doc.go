// Package sqlitedbtest checks a component's SQLite schema steps against
// the steps an earlier build ran: a database either build made must open
// with the other, and both must make the same schema.
package sqlitedbtest
