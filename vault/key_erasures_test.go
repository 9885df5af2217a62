package vault

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/memvault/memvault/config"
	"github.com/memvault/memvault/memvaulttest/pgtest"
	"github.com/memvault/memvault/memvaulttest/testkeys"
)

// TestKeyTableBackupRefused: a backup of the key table taken before an
// erasure, restored after it — with every key the erasure destroyed — is
// refused by Open (ErrSubjectsChanged), on SQLite (the key file copied
// back) and PostgreSQL (the key schema's rows put back). The id pin alone
// let it in: a backup carries the table's id, and with it carol's key
// read back carol:1 and sealed a new carol:2 (found by the session 22
// review with a copied key file, TestReviewS22CopiedKeyTableAccepted).
// The database's erasure mark written by Forget is what tells them apart;
// a table that counts more than the mark (the mark lost, as when Forget
// dies right after destroying the keys) moves the mark up and opens.
func TestKeyTableBackupRefused(t *testing.T) {
	for _, pg := range []bool{false, true} {
		t.Run(map[bool]string{false: "SQLite", true: "PostgreSQL"}[pg], func(t *testing.T) {
			ctx := context.Background()
			dir := t.TempDir()
			c := config.Default()
			c.DBPath = filepath.Join(dir, "agent.db")
			var keySchema string
			if pg {
				c.DSN = pgtest.SchemaDSN(t)
				keySchema = fmt.Sprintf("keys_%d", time.Now().UnixNano())
				c.KeyTable = keySchema
			}
			c.Keys.Primary = testkeys.Key
			c.Embeddings = "none"
			c.Subjects.ThreadSeparator = ":"
			c.Subjects.NamespacePrefix = []string{"users"}
			h, err := Open(ctx, c)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := putCarolS22(ctx, h, "carol:1", "carol takes insulin"); err != nil {
				t.Fatal(err)
			}
			h.Close()

			backup, restore := keyTableBackup(t, c, dir, keySchema)
			backup()
			erase := func() {
				h, err := Open(ctx, c)
				if err != nil {
					t.Fatal(err)
				}
				defer h.Close()
				if _, err := h.Forget(ctx, "carol"); err != nil {
					t.Fatal(err)
				}
			}
			erase()
			restore()
			if h, err := Open(ctx, c); err == nil {
				got, perr := putCarolS22(ctx, h, "carol:2", "carol takes insulin (after erasure)")
				h.Close()
				t.Fatalf("Open with the key table's backup from before Forget(carol) = nil error (then put carol:2: %v, read back %q), want ErrSubjectsChanged", perr, got)
			} else if !errors.Is(err, ErrSubjectsChanged) {
				t.Fatalf("Open with the key table's backup from before Forget(carol) = %v, want ErrSubjectsChanged", err)
			}

			// The table the erasure ran on, the database's mark lost (as
			// when Forget dies right after destroying the keys): it
			// opens, and the mark is back.
			if pg {
				return // the same code; restore() is not undone here
			}
			if err := os.Rename(c.DBPath+".keys.erased", c.DBPath+".keys"); err != nil {
				t.Fatal(err)
			}
			db, err := sql.Open("sqlite", c.DBPath)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			if _, err := db.Exec(`DELETE FROM memvault_meta WHERE name = 'subject_key_erasures'`); err != nil {
				t.Fatal(err)
			}
			if h, err = Open(ctx, c); err != nil {
				t.Fatalf("Open with the key table the erasure ran on, the database's mark lost: %v", err)
			}
			h.Close()
			var mark string
			if err := db.QueryRow(`SELECT value FROM memvault_meta WHERE name = 'subject_key_erasures'`).Scan(&mark); err != nil || mark != "1" {
				t.Fatalf("the erasure mark after that open = %q, %v; want 1", mark, err)
			}
		})
	}
}

// keyTableBackup returns functions that take a backup of c's key table
// and restore it: the SQLite key file beside the database (the erased
// table kept as <file>.erased for the test's later steps), or every row of
// the PostgreSQL key schema.
func keyTableBackup(t *testing.T, c config.Config, dir, schema string) (backup, restore func()) {
	t.Helper()
	ctx := context.Background()
	if schema == "" {
		file, saved := c.DBPath+".keys", filepath.Join(dir, "keys.backup")
		if _, err := os.Stat(file); err != nil {
			t.Fatalf("no key file beside the database: %v", err)
		}
		copyFile := func(from, to string) {
			b, err := os.ReadFile(from)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(to, b, 0o600); err != nil {
				t.Fatal(err)
			}
		}
		return func() { copyFile(file, saved) }, func() {
			if err := os.Rename(file, file+".erased"); err != nil {
				t.Fatal(err)
			}
			for _, suffix := range []string{"-wal", "-shm"} {
				_ = os.Remove(file + suffix)
			}
			copyFile(saved, file)
		}
	}
	conn, err := pgx.Connect(ctx, c.DSN)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(ctx) })
	tables := func() []string {
		rows, err := conn.Query(ctx, `SELECT table_name FROM information_schema.tables WHERE table_schema = $1 AND table_type = 'BASE TABLE'`, schema)
		if err != nil {
			t.Fatal(err)
		}
		names, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil || len(names) == 0 {
			t.Fatalf("key schema %s: tables %v, %v", schema, names, err)
		}
		return names
	}
	return func() {
			for _, tbl := range tables() {
				src := pgx.Identifier{schema, tbl}.Sanitize()
				if _, err := conn.Exec(ctx, `CREATE TABLE `+pgx.Identifier{schema + "_backup_" + tbl}.Sanitize()+` AS TABLE `+src); err != nil {
					t.Fatal(err)
				}
			}
		}, func() {
			for _, tbl := range tables() {
				dst := pgx.Identifier{schema, tbl}.Sanitize()
				if _, err := conn.Exec(ctx, `DELETE FROM `+dst+`; INSERT INTO `+dst+` SELECT * FROM `+pgx.Identifier{schema + "_backup_" + tbl}.Sanitize()); err != nil {
					t.Fatal(err)
				}
			}
		}
}
