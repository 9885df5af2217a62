package readmetest

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/memvault/memvault/memvaulttest/pgtest"
	"github.com/memvault/memvault/memvaulttest/testkeys"
)

// Env exports MEMVAULT_DB (a file in a new temporary directory) and
// LANGGRAPH_AES_KEY (testkeys.Key) for the rest of t, as a deployment
// would before calling vault.OpenEnv, and returns the directory.
func Env(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	t.Setenv("MEMVAULT_DB", filepath.Join(dir, "agent.db"))
	t.Setenv("LANGGRAPH_AES_KEY", testkeys.Key)
	return dir
}

// NoPlaintext fails t when a file of dir (the database, its write-ahead
// log, its audit file…) holds one of secrets as bytes.
func NoPlaintext(t *testing.T, dir string, secrets ...string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) == 0 {
		t.Fatalf("%s holds no file: the snippet stored nothing there", dir)
	}
	var files []string
	for _, e := range entries {
		files = append(files, filepath.Join(dir, e.Name()))
	}
	testkeys.NoPlaintext(t, files, secrets...)
}

var goBlock = regexp.MustCompile("(?s)```go\n(.*?)```")

// Quoted fails t unless the README's Go snippet that contains marker is
// quoted, line for line and in order, in function fn of the Go file src
// (indentation and trailing comments aside). readme is the README's path
// from the test's directory; when it does not exist — the module was
// downloaded, not checked out with its repository — t is skipped.
func Quoted(t *testing.T, readme, marker, src, fn string) {
	t.Helper()
	text, err := os.ReadFile(readme)
	if os.IsNotExist(err) {
		t.Skipf("%s is not here: the module is outside its repository", readme)
	}
	if err != nil {
		t.Fatal(err)
	}
	code, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	body := string(code)
	i := strings.Index(body, "func "+fn+"(")
	if i < 0 {
		t.Fatalf("%s has no function %s", src, fn)
	}
	body = body[i:]
	if j := strings.Index(body, "\n}\n"); j >= 0 {
		body = body[:j]
	}
	var lines []string
	for _, l := range strings.Split(body, "\n") {
		lines = append(lines, line(l))
	}
	var snippet string
	for _, m := range goBlock.FindAllStringSubmatch(string(text), -1) {
		if strings.Contains(m[1], marker) {
			if snippet != "" {
				t.Fatalf("%s has two Go snippets with %q", readme, marker)
			}
			snippet = m[1]
		}
	}
	if snippet == "" {
		t.Fatalf("%s has no Go snippet with %q", readme, marker)
	}
	at := 0
	for _, l := range strings.Split(snippet, "\n") {
		if l = line(l); l == "" {
			continue
		}
		for at < len(lines) && lines[at] != l {
			at++
		}
		if at == len(lines) {
			t.Fatalf("the README's snippet line %q is not in %s (in the snippet's order)", l, fn)
		}
	}
}

// line is a Go line without indentation and trailing comment.
func line(l string) string {
	if i := strings.Index(l, "//"); i >= 0 {
		l = l[:i]
	}
	return strings.TrimSpace(l)
}

// EnvPostgres is Env on PostgreSQL: it exports MEMVAULT_DSN (a schema of
// the test's own, from pgtest.SchemaDSN) and LANGGRAPH_AES_KEY, and
// returns the DSN. The package's TestMain must call pgtest.Main.
func EnvPostgres(t *testing.T) string {
	t.Helper()
	dsn := pgtest.SchemaDSN(t)
	t.Setenv("MEMVAULT_DB", "")
	t.Setenv("MEMVAULT_DSN", dsn)
	t.Setenv("LANGGRAPH_AES_KEY", testkeys.Key)
	return dsn
}

// NoPlaintextPostgres fails t when a row of a table in dsn's schema holds
// one of secrets, read as the row's text and each bytea column's bytes.
func NoPlaintextPostgres(t *testing.T, dsn string, secrets ...string) {
	t.Helper()
	for tb, all := range DumpPostgres(t, dsn) {
		for _, s := range secrets {
			if i := strings.Index(all, s); i >= 0 {
				lo, hi := max(0, i-100), min(len(all), i+len(s)+40)
				t.Errorf("table %s holds %q in plaintext: …%q…", tb, s, all[lo:hi])
			}
		}
	}
}

// DumpPostgres returns, by table, what each table of dsn's schema holds as
// an attacker with a copy of the database reads it: every row's text,
// then each bytea column's bytes (a row's text shows them as hex, which
// hides plaintext kept in them). It fails t when the schema has no table.
func DumpPostgres(t *testing.T, dsn string) map[string]string {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	collect := func(sql string, args ...any) []string {
		rows, err := conn.Query(ctx, sql, args...)
		if err != nil {
			t.Fatal(err)
		}
		out, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	tables := collect(`SELECT quote_ident(table_name) FROM information_schema.tables
		WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'`)
	if len(tables) == 0 {
		t.Fatal("the test's schema holds no table: nothing was stored there")
	}
	dump := map[string]string{}
	for _, tb := range tables {
		texts := collect(`SELECT t::text FROM ` + tb + ` t`)
		for _, c := range collect(`SELECT quote_ident(column_name) FROM information_schema.columns
			WHERE table_schema = current_schema() AND quote_ident(table_name) = $1 AND data_type = 'bytea'`, tb) {
			texts = append(texts, collect(`SELECT encode(`+c+`, 'escape') FROM `+tb+` WHERE `+c+` IS NOT NULL`)...)
		}
		dump[tb] = strings.Join(texts, "\n")
	}
	return dump
}

// VectorsOnlyUnderPostgres fails t unless the store_vectors table of
// dsn's schema holds vectors, all of items under the dotted namespace
// prefix: the only items README says the adapter embeds (what, as README
// names them). A vector elsewhere is a plaintext part README does not
// list (keyed vectors still show which items resemble each other), and
// an embedding computed on every write.
func VectorsOnlyUnderPostgres(t *testing.T, dsn, prefix, what string) {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, `SELECT DISTINCT prefix FROM store_vectors ORDER BY prefix`)
	if err != nil {
		t.Fatal(err)
	}
	got, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	if len(got) == 0 {
		t.Fatal("no vector at all: the snippet embedded nothing")
	}
	for _, ns := range got {
		if !strings.HasPrefix(ns, prefix) {
			t.Errorf("store_vectors holds vectors of namespace %q (all: %q); README lists only %s", ns, got, what)
		}
	}
}
