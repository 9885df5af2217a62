package sqlexec_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/memvault/memvault/internal/sqlexec"
	"github.com/memvault/memvault/internal/sqlitedb"
)

// renameAll is code a core shares between the SQL drivers: written once
// against sqlexec.DB, with "?" placeholders, it runs unchanged on SQLite
// and (through pgdb.Exec) on PostgreSQL.
func renameAll(ctx context.Context, db sqlexec.DB, suffix string) ([]string, error) {
	var stmts []sqlexec.Stmt
	err := db.Query(ctx, `SELECT id FROM notes ORDER BY id`, nil, func(scan func(dest ...any) error) error {
		var id string
		if err := scan(&id); err != nil {
			return err
		}
		stmts = append(stmts, sqlexec.Stmt{SQL: `UPDATE notes SET title = title || ? WHERE id = ?`, Args: []any{suffix, id}})
		return nil
	})
	if err != nil {
		return nil, err
	}
	if err := db.ExecTx(ctx, stmts); err != nil {
		return nil, err
	}
	var titles []string
	err = db.Query(ctx, `SELECT title FROM notes ORDER BY id`, nil, func(scan func(dest ...any) error) error {
		var t string
		err := scan(&t)
		titles = append(titles, t)
		return err
	})
	return titles, err
}

// A SQLite database as a DB: reads on its reader pool, the statements of
// ExecTx in one write transaction.
func ExampleSQLite() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "memvault-sqlexec")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	d, err := sqlitedb.Open(filepath.Join(dir, "data.db"), sqlitedb.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer d.Close()
	if err := d.Migrate(ctx, "notes", []string{`CREATE TABLE notes (id TEXT PRIMARY KEY, title TEXT NOT NULL);
INSERT INTO notes VALUES ('n1', 'plan'), ('n2', 'diet')`}); err != nil {
		fmt.Println(err)
		return
	}

	db := sqlexec.SQLite{Read: d.Reader(), Write: d.Write, CompactFile: d.Compact}
	fmt.Println(renameAll(ctx, db, " (v2)"))
	// Re-encryption compacts the file when done, so that it keeps no
	// image of the rows it rewrote.
	var c sqlexec.Compacter = db
	fmt.Println(c.Compact(ctx))
	// Output:
	// [plan (v2) diet (v2)] <nil>
	// <nil>
}
