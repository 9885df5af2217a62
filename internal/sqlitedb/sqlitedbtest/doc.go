// Package sqlitedbtest checks a component's SQLite schema steps against
// the steps an earlier build ran: a database either build made must open
// with the other, and both must make the same schema. A component's schema
// test (checkpointer/sqlitesaver, store/sqlitestore, keys/sqlitekeys,
// audit/sqliteaudit) copies the earlier build's steps verbatim and calls
// CheckUpgrade; Dump is the text it compares.
//
// It is for tests only: it migrates real SQLite files in the test's
// temporary directory and knows nothing of any component's tables.
package sqlitedbtest
