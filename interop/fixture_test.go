package interop_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/memvault/memvault/checkpointer/pgsaver"
	"github.com/memvault/memvault/memvaulttest/jsrows"
	"github.com/memvault/memvault/memvaulttest/pgtest"
)

const (
	fixtureSQL  = "../memvaulttest/jsrows/testdata/js_rows.sql"
	fixtureJSON = "testdata/js_rows.json"
)

// fixtureTables are the tables JS's setup() creates, in dump order.
var fixtureTables = []string{"checkpoint_migrations", "checkpoints", "checkpoint_blobs", "checkpoint_writes"}

// TestJSRowsFixture reads the rows JS LangGraph wrote (testdata/js_rows.sql)
// with memvault, without node: loaded into a fresh schema, upgraded by
// memvault's Setup, every checkpoint must read as JS read it
// (testdata/js_rows.json).
func TestJSRowsFixture(t *testing.T) {
	ctx := context.Background()
	pool, schema := pgtest.Schema(t)
	if err := jsrows.Exec(ctx, pool, jsrows.JSRowsSQL); err != nil {
		t.Fatalf("load %s: %v", fixtureSQL, err)
	}
	if got := migrationVersions(t, pool, schema); !slices.Equal(got, upTo(4)) {
		t.Fatalf("fixture checkpoint_migrations = %v, want JS's 0..4", got)
	}
	var out writeOutput
	b, err := os.ReadFile(fixtureJSON)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("%s: %v", fixtureJSON, err)
	}
	fixtureThreads(t, out)

	s, err := pgsaver.New(pool, pgsaver.Options{Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Setup(ctx); err != nil {
		t.Fatalf("memvault Setup on the fixture: %v", err)
	}
	if got := migrationVersions(t, pool, schema); !slices.Equal(got, upTo(9)) {
		t.Fatalf("after memvault Setup: checkpoint_migrations = %v, want 0..9", got)
	}
	checkJSThreads(t, s, out)
}

// TestUpdateFixtures regenerates testdata/js_rows.sql and js_rows.json from
// a live run of js/write.mjs (go test ./interop/ -run TestUpdateFixtures
// -update-fixtures), and checks that the dump loads back into the same rows.
func TestUpdateFixtures(t *testing.T) {
	if !*updateFixtures {
		t.Skip("run with -update-fixtures to regenerate testdata/js_rows.*")
	}
	requireNode(t)
	ctx := context.Background()
	pool, schema := pgtest.Schema(t)
	var out writeOutput
	runNode(t, &out, "write.mjs", schema)
	var g graphOutput
	runNode(t, &g, "graph.mjs", schema, jsrows.JSRealGraphThread, "start")
	out.Tuples[jsrows.JSRealGraphThread] = g.Tuples
	out.Threads[jsrows.JSRealGraphThread] = map[string]string{"latest": g.Tuples[0].Config.CheckpointID}
	for _, tu := range g.Tuples {
		if tu.Config.CheckpointNS == "" {
			out.Threads[jsrows.JSRealGraphThread]["latest"] = tu.Config.CheckpointID
			break
		}
	}
	fixtureThreads(t, out)

	dump, err := dumpTables(ctx, pool, schema, jsVersions(t))
	if err != nil {
		t.Fatal(err)
	}
	pretty, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	pretty = append(pretty, '\n')

	// The dump must load back into exactly the rows JS wrote.
	copyPool, copySchema := pgtest.Schema(t)
	if err := jsrows.Exec(ctx, copyPool, dump); err != nil {
		t.Fatalf("reload dump: %v", err)
	}
	for _, table := range fixtureTables {
		a, b := tableText(t, pool, schema, table), tableText(t, copyPool, copySchema, table)
		if a != b {
			t.Fatalf("%s differs after reload:\n%s\nvs\n%s", table, a, b)
		}
	}

	if err := os.WriteFile(filepath.FromSlash(fixtureSQL), []byte(dump), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.FromSlash(fixtureJSON), pretty, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %s (%d bytes) and %s", fixtureSQL, len(dump), fixtureJSON)
}

// jsVersions returns "name version" of the installed JS packages.
func jsVersions(t testing.TB) []string {
	t.Helper()
	var out []string
	for _, pkg := range []string{"@langchain/langgraph-checkpoint-postgres", "@langchain/langgraph-checkpoint", "@langchain/langgraph", "@langchain/core", "pg"} {
		b, err := os.ReadFile(filepath.Join(jsDir, "node_modules", filepath.FromSlash(pkg), "package.json"))
		if err != nil {
			t.Fatal(err)
		}
		var p struct{ Version string }
		if err := json.Unmarshal(b, &p); err != nil {
			t.Fatal(err)
		}
		out = append(out, pkg+" "+p.Version)
	}
	return out
}

// dumpTables renders the checkpoint tables of schema as SQL: CREATE TABLE
// statements read from the catalog and one INSERT per row, ordered by
// primary key, with unqualified table names (they resolve through
// search_path). Each statement is on its own lines and ends with ";".
func dumpTables(ctx context.Context, pool *pgxpool.Pool, schema string, versions []string) (string, error) {
	var b strings.Builder
	b.WriteString("-- Rows written by JS LangGraph's PostgresSaver, exactly as it wrote them:\n")
	b.WriteString("-- its setup() (migrations 0..4: no task_path column, no thread_id indexes)\n")
	b.WriteString("-- then interop/js/write.mjs (put, putWrites) and a real StateGraph run (graph.mjs start) with\n")
	for _, v := range versions {
		fmt.Fprintf(&b, "--   %s\n", v)
	}
	b.WriteString("-- Generated by: go test ./interop/ -run TestUpdateFixtures -update-fixtures\n")
	b.WriteString("-- Threads: js-graph, js-sends, js-real-graph; checkpoint ids and JS's reading: js_rows.json.\n")
	b.WriteString("-- Table names are unqualified: load with search_path set to the target schema.\n")
	for _, table := range fixtureTables {
		ddl, cols, pk, err := tableDDL(ctx, pool, schema, table)
		if err != nil {
			return "", err
		}
		b.WriteString(ddl)
		sel := make([]string, len(cols))
		for i, c := range cols {
			sel[i] = pgx.Identifier{c}.Sanitize() + "::text"
		}
		rows, err := pool.Query(ctx, "SELECT "+strings.Join(sel, ", ")+" FROM "+pgx.Identifier{schema, table}.Sanitize()+" ORDER BY "+pk)
		if err != nil {
			return "", err
		}
		for rows.Next() {
			vals := make([]*string, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				rows.Close()
				return "", err
			}
			lits := make([]string, len(cols))
			for i, v := range vals {
				lits[i] = sqlLiteral(v)
			}
			fmt.Fprintf(&b, "INSERT INTO %s (%s) VALUES (%s);\n", table, strings.Join(cols, ", "), strings.Join(lits, ", "))
		}
		if err := rows.Err(); err != nil {
			return "", err
		}
	}
	return b.String(), nil
}

// tableDDL returns the CREATE TABLE statement of schema.table as the
// catalog describes it, its column names and its primary key columns.
func tableDDL(ctx context.Context, pool *pgxpool.Pool, schema, table string) (ddl string, cols []string, pk string, err error) {
	rel := pgx.Identifier{schema, table}.Sanitize()
	rows, err := pool.Query(ctx, `
SELECT a.attname, format_type(a.atttypid, a.atttypmod), a.attnotnull, pg_get_expr(d.adbin, d.adrelid)
FROM pg_attribute a LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
WHERE a.attrelid = $1::regclass AND a.attnum > 0 AND NOT a.attisdropped
ORDER BY a.attnum`, rel)
	if err != nil {
		return "", nil, "", err
	}
	var lines []string
	for rows.Next() {
		var name, typ string
		var notNull bool
		var def *string
		if err := rows.Scan(&name, &typ, &notNull, &def); err != nil {
			rows.Close()
			return "", nil, "", err
		}
		line := "    " + name + " " + typ
		if def != nil {
			line += " DEFAULT " + *def
		}
		if notNull {
			line += " NOT NULL"
		}
		lines = append(lines, line)
		cols = append(cols, name)
	}
	if err := rows.Err(); err != nil {
		return "", nil, "", err
	}
	var pkdef string
	if err := pool.QueryRow(ctx, `SELECT pg_get_constraintdef(oid) FROM pg_constraint WHERE conrelid = $1::regclass AND contype = 'p'`, rel).Scan(&pkdef); err != nil {
		return "", nil, "", fmt.Errorf("primary key of %s: %w", table, err)
	}
	lines = append(lines, "    "+pkdef)
	pk = strings.TrimSuffix(strings.TrimPrefix(pkdef, "PRIMARY KEY ("), ")")
	return "CREATE TABLE " + table + " (\n" + strings.Join(lines, ",\n") + "\n);\n", cols, pk, nil
}

// sqlLiteral quotes a value's text form for an INSERT (PostgreSQL casts an
// untyped literal to the column's type). Text with control characters uses
// an E'...' literal so that every statement stays on one line.
func sqlLiteral(v *string) string {
	if v == nil {
		return "NULL"
	}
	s := *v
	if !strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return "'" + strings.ReplaceAll(s, "'", "''") + "'"
	}
	var b strings.Builder
	b.WriteString("E'")
	for _, r := range s {
		switch {
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\'':
			b.WriteString(`\'`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteString("'")
	return b.String()
}

// tableText renders every row of schema.table as text, in primary key
// order, for comparing two copies.
func tableText(t testing.TB, pool *pgxpool.Pool, schema, table string) string {
	t.Helper()
	rel := pgx.Identifier{schema, table}.Sanitize()
	var s *string
	if err := pool.QueryRow(context.Background(), "SELECT string_agg(r::text, E'\\n' ORDER BY r::text) FROM "+rel+" r").Scan(&s); err != nil {
		t.Fatal(err)
	}
	if s == nil {
		return ""
	}
	return *s
}
