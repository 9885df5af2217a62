// Package sqlrows is the row handling the SQL checkpointer drivers
// (checkpointer/sqlitesaver, checkpointer/pgsaver) share: LangGraph's three
// tables read into the driver types of package checkpointer, whatever the
// database client. It imports no database driver: pgx.Rows is a Rows, and
// *sql.Rows is one through a one-method adapter.
package sqlrows
