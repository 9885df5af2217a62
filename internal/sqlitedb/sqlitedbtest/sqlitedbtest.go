package sqlitedbtest

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/memvault/memvault/internal/sqlitedb"
)

// CheckUpgrade checks steps, the component's schema steps, against old, the
// steps of an earlier build (copied verbatim into the test), old being a
// prefix of steps in effect:
//
//   - a fresh database migrated with old, then with steps, equals one
//     migrated with steps only: sqlite_master (type, name, table and SQL
//     text, byte for byte), PRAGMA user_version, memvault_migrations'
//     (component, v) rows and every table's rows;
//   - a database the earlier build left at each of its versions 0 ..
//     len(old)-1 migrates with steps to that same database, and open (when
//     not nil: the package's own constructor) opens it;
//   - a database migrated with steps is left unchanged by old, as the
//     earlier build opening it would.
func CheckUpgrade(t *testing.T, component string, old, steps []string, open func(ctx context.Context, path string) error) {
	t.Helper()
	ctx := context.Background()
	if len(steps) < len(old) {
		t.Fatalf("%s: %d steps, fewer than the %d of the earlier build", component, len(steps), len(old))
	}
	dir := t.TempDir()
	build := func(name string, runs ...[]string) (string, string) {
		t.Helper()
		path := filepath.Join(dir, name)
		db, err := sqlitedb.Open(path, sqlitedb.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		for i, r := range runs {
			if err := db.Migrate(ctx, component, r); err != nil {
				t.Fatalf("%s: run %d: %v", name, i, err)
			}
		}
		d, err := Dump(ctx, db.Reader())
		if err != nil {
			t.Fatal(err)
		}
		return path, d
	}
	_, fresh := build("fresh.db", steps)
	if _, viaOld := build("via-old.db", old, steps); viaOld != fresh {
		t.Errorf("%s: a fresh database differs from one the earlier build made then migrated:\n%s", component, diff(viaOld, fresh))
	}
	for v := range old {
		name := fmt.Sprintf("old-v%d.db", v)
		build(name, old[:v+1])
		if _, got := build(name, steps); got != fresh {
			t.Errorf("%s: the earlier build's v%d, migrated, differs from a fresh database:\n%s", component, v, diff(got, fresh))
		}
		if open != nil {
			path, _ := build(fmt.Sprintf("old-v%d-open.db", v), old[:v+1])
			if err := open(ctx, path); err != nil {
				t.Errorf("%s: open the earlier build's v%d: %v", component, v, err)
			}
		}
	}
	if _, back := build("fresh.db", old); back != fresh {
		t.Errorf("%s: the earlier build changed a database the new one made:\n%s", component, diff(back, fresh))
	}
}

// Dump describes db's schema and contents as text: PRAGMA user_version,
// sqlite_master's rows but the root pages, and each table's rows sorted
// (memvault_migrations without applied_at).
func Dump(ctx context.Context, db *sql.DB) (string, error) {
	var b strings.Builder
	var uv int
	if err := db.QueryRowContext(ctx, `PRAGMA user_version`).Scan(&uv); err != nil {
		return "", err
	}
	fmt.Fprintf(&b, "user_version %d\n", uv)
	rows, err := db.QueryContext(ctx, `SELECT type, name, tbl_name, coalesce(sql, '') FROM sqlite_master ORDER BY type, name`)
	if err != nil {
		return "", err
	}
	var tables []string
	for rows.Next() {
		var typ, name, tbl, text string
		if err := rows.Scan(&typ, &name, &tbl, &text); err != nil {
			rows.Close()
			return "", err
		}
		fmt.Fprintf(&b, "%s %s on %s: %q\n", typ, name, tbl, text)
		if typ == "table" {
			tables = append(tables, name)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return "", err
	}
	for _, tbl := range tables {
		q := `SELECT * FROM "` + tbl + `"`
		if tbl == "memvault_migrations" {
			q = `SELECT component, v FROM memvault_migrations`
		}
		lines, err := tableRows(ctx, db, q)
		if err != nil {
			return "", fmt.Errorf("%s: %w", tbl, err)
		}
		fmt.Fprintf(&b, "rows of %s:\n%s", tbl, strings.Join(lines, ""))
	}
	return b.String(), nil
}

func tableRows(ctx context.Context, db *sql.DB, q string) ([]string, error) {
	rows, err := db.QueryContext(ctx, q)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, err
	}
	var out []string
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, err
		}
		out = append(out, fmt.Sprintf("  %#v\n", vals))
	}
	slices.Sort(out)
	return out, rows.Err()
}

// diff shows the lines of got and want that differ.
func diff(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	var b strings.Builder
	for _, l := range g {
		if !slices.Contains(w, l) {
			fmt.Fprintf(&b, "- got:  %s\n", l)
		}
	}
	for _, l := range w {
		if !slices.Contains(g, l) {
			fmt.Fprintf(&b, "+ want: %s\n", l)
		}
	}
	return b.String()
}
