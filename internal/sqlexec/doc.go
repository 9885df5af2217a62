// Package sqlexec lets code shared by the SQL drivers run its statements on
// either database: a DB runs a query row by row and runs a list of
// statements in one transaction, with statements written once, with "?"
// placeholders, and rebound to PostgreSQL's "$n" where needed. The shared
// operations (re-encryption, thread listing) are spelled once in the cores
// and run unchanged on SQLite and PostgreSQL.
package sqlexec
