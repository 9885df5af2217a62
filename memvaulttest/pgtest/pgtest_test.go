package pgtest_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/memvault/memvault/memvaulttest/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// currentSchema returns the first schema of the connection's search_path.
func currentSchema(t *testing.T, q interface {
	QueryRow(context.Context, string, ...any) pgx.Row
}) string {
	t.Helper()
	var s string
	if err := q.QueryRow(context.Background(), "SELECT current_schema()").Scan(&s); err != nil {
		t.Fatalf("current_schema: %v", err)
	}
	return s
}

// schemaExists reports whether the schema exists, asked over a fresh connection.
func schemaExists(t *testing.T, name string) bool {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, pgtest.DSN(t))
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer conn.Close(ctx)
	var ok bool
	if err := conn.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = $1)", name).Scan(&ok); err != nil {
		t.Fatalf("query pg_namespace: %v", err)
	}
	return ok
}

func TestSchemaPerTest(t *testing.T) {
	t.Parallel()
	names := make(chan string, 2)
	for _, sub := range []string{"a", "b"} {
		t.Run(sub, func(t *testing.T) {
			pool, schema := pgtest.Schema(t)
			if !strings.HasPrefix(schema, "t_testschemapertest_"+sub+"_") {
				t.Errorf("schema %q is not named after the test", schema)
			}
			if got := currentSchema(t, pool); got != schema {
				t.Errorf("current_schema() = %q, want %q", got, schema)
			}
			names <- schema
		})
	}
	a, b := <-names, <-names
	if a == b {
		t.Fatalf("two tests got the same schema %q", a)
	}
	for _, s := range []string{a, b} {
		if schemaExists(t, s) {
			t.Errorf("schema %q survived its test", s)
		}
	}
}

func TestSchemaIsolation(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	p1, s1 := pgtest.Schema(t)
	p2, s2 := pgtest.Schema(t)
	if s1 == s2 {
		t.Fatalf("two calls gave the same schema %q", s1)
	}
	if _, err := p1.Exec(ctx, "CREATE TABLE items (n int); INSERT INTO items VALUES (1), (2)"); err != nil {
		t.Fatalf("create in first schema: %v", err)
	}
	var reg *string
	if err := p2.QueryRow(ctx, "SELECT to_regclass('items')::text").Scan(&reg); err != nil {
		t.Fatalf("to_regclass: %v", err)
	}
	if reg != nil {
		t.Fatalf("table of the first schema visible from the second as %s", *reg)
	}
	if _, err := p2.Exec(ctx, "CREATE TABLE items (n int); INSERT INTO items VALUES (7)"); err != nil {
		t.Fatalf("create same name in second schema: %v", err)
	}
	var n1, n2 int
	if err := p1.QueryRow(ctx, "SELECT count(*) FROM items").Scan(&n1); err != nil {
		t.Fatal(err)
	}
	if err := p2.QueryRow(ctx, "SELECT count(*) FROM items").Scan(&n2); err != nil {
		t.Fatal(err)
	}
	if n1 != 2 || n2 != 1 {
		t.Fatalf("row counts = %d, %d; want 2, 1", n1, n2)
	}
	var where string
	if err := p1.QueryRow(ctx, "SELECT table_schema FROM information_schema.tables WHERE table_name = 'items' AND table_schema = $1", s1).Scan(&where); err != nil {
		t.Fatalf("items not created in %s: %v", s1, err)
	}
}

func TestVector(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.Pool(t)
	if _, err := pool.Exec(ctx, `CREATE TABLE docs (id int PRIMARY KEY, embedding vector(3));
		INSERT INTO docs VALUES (1, '[1,0,0]'), (2, '[0,1,0]'), (3, '[0.9,0.1,0]')`); err != nil {
		t.Fatalf("create table with a vector column: %v", err)
	}
	rows, err := pool.Query(ctx, "SELECT id FROM docs ORDER BY embedding <=> '[1,0,0]' LIMIT 2")
	if err != nil {
		t.Fatalf("nearest neighbours: %v", err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[int])
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(ids) != "[1 3]" {
		t.Fatalf("nearest to [1,0,0] = %v, want [1 3]", ids)
	}
}

func TestSchemaDSN(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dsn := pgtest.SchemaDSN(t)
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatalf("connect with %s: %v", dsn, err)
	}
	t.Cleanup(func() { conn.Close(ctx) })
	schema := currentSchema(t, conn)
	if !strings.HasPrefix(schema, "t_testschemadsn_") {
		t.Fatalf("current_schema() = %q, want the test's schema", schema)
	}
	if _, err := conn.Exec(ctx, "CREATE TABLE v (e vector(2))"); err != nil {
		t.Fatalf("vector type not visible through the schema DSN: %v", err)
	}
}

func TestWithSearchPath(t *testing.T) {
	tests := []struct {
		name    string
		dsn     string
		schemas []string
		want    string
	}{
		{"url", "postgres://u@h:5/db?sslmode=disable", []string{"s1", "public"},
			"postgres://u@h:5/db?options=-csearch_path%3Ds1%2Cpublic&sslmode=disable"},
		{"url keeps options", "postgresql://h/db?options=-cwork_mem%3D8MB", []string{"s"},
			"postgresql://h/db?options=-cwork_mem%3D8MB%20-csearch_path%3Ds"},
		{"keyword value", "host=h dbname=db", []string{"s", "public"},
			`host=h dbname=db options='-csearch_path=s,public'`},
		{"empty", "", []string{"s"}, `options='-csearch_path=s'`},
		{"quoted names", "host=h", []string{`My Schema`, `it's`},
			`host=h options='-csearch_path="My\\ Schema","it\'s"'`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := pgtest.WithSearchPath(tt.dsn, tt.schemas...)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Fatalf("WithSearchPath(%q, %q)\n got %s\nwant %s", tt.dsn, tt.schemas, got, tt.want)
			}
		})
	}
	for _, bad := range [][]string{nil, {""}, {"a\x00b"}} {
		if _, err := pgtest.WithSearchPath("host=h", bad...); err == nil {
			t.Errorf("WithSearchPath(%q) succeeded", bad)
		}
	}
}

// TestWithSearchPathServer checks that the server reads quoted names and
// escapes as WithSearchPath writes them.
func TestWithSearchPathServer(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, schema := pgtest.Schema(t)
	odd := `Odd Name's "x"\` + schema[2:]
	admin, err := pgx.Connect(ctx, pgtest.DSN(t))
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	if _, err := admin.Exec(ctx, "CREATE SCHEMA "+pgx.Identifier{odd}.Sanitize()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = admin.Exec(ctx, "DROP SCHEMA "+pgx.Identifier{odd}.Sanitize()) })

	for _, base := range []string{pgtest.DSN(t), keywordForm(t, pgtest.DSN(t))} {
		dsn, err := pgtest.WithSearchPath(base, odd, schema)
		if err != nil {
			t.Fatal(err)
		}
		conn, err := pgx.Connect(ctx, dsn)
		if err != nil {
			t.Fatalf("connect with %s: %v", dsn, err)
		}
		got := currentSchema(t, conn)
		conn.Close(ctx)
		if got != odd {
			t.Errorf("with %s: current_schema() = %q, want %q", dsn, got, odd)
		}
	}
}

// keywordForm turns a pgx URL connection string into the key/value form.
func keywordForm(t *testing.T, dsn string) string {
	t.Helper()
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("host=%s port=%d user=%s dbname=%s sslmode=disable", cfg.Host, cfg.Port, cfg.User, cfg.Database)
}

// helperEnv, when set, makes TestHelperProcess act as a test binary using the
// cluster; its value says how it ends.
const helperEnv = "PGTEST_HELPER"

// TestHelperProcess is not a test: the cluster tests run the test binary
// again with it selected. It prints the cluster's directory, then either
// returns (mode "exit") or waits to be killed (mode "hang").
func TestHelperProcess(t *testing.T) {
	mode := os.Getenv(helperEnv)
	if mode == "" {
		t.Skip("helper process for the cluster lifetime tests")
	}
	var dataDir string
	if err := pgtest.Pool(t).QueryRow(context.Background(), "SHOW data_directory").Scan(&dataDir); err != nil {
		t.Fatal(err)
	}
	fmt.Printf("CLUSTERDIR=%s\n", filepath.Dir(dataDir))
	if mode == "hang" {
		time.Sleep(time.Hour)
	}
}

// runHelper starts the helper process and returns it with the cluster
// directory it printed.
func runHelper(t *testing.T, mode string) (*exec.Cmd, string) {
	t.Helper()
	if testing.Short() {
		t.Skip("starts PostgreSQL")
	}
	if os.Getenv(pgtest.EnvDatabaseURL) != "" {
		t.Skip("no throwaway cluster with " + pgtest.EnvDatabaseURL)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), helperEnv+"="+mode)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		if dir, ok := strings.CutPrefix(sc.Text(), "CLUSTERDIR="); ok {
			go func() { // drain the rest so the helper never blocks on output
				for sc.Scan() {
				}
			}()
			return cmd, dir
		}
	}
	_ = cmd.Wait()
	t.Fatalf("helper printed no cluster directory (err %v)", sc.Err())
	return nil, ""
}

// waitGone waits, within a generous bound, for dir to disappear.
func waitGone(t *testing.T, dir string) {
	t.Helper()
	for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
			return
		}
	}
	t.Fatalf("cluster directory %s still exists", dir)
}

func TestClusterStoppedAtExit(t *testing.T) {
	t.Parallel()
	cmd, dir := runHelper(t, "exit")
	if err := cmd.Wait(); err != nil {
		t.Fatalf("helper: %v", err)
	}
	// pgtest.Main returns only after the cluster is stopped and removed.
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("cluster directory %s left after a clean exit (stat: %v)", dir, err)
	}
}

func TestClusterStoppedWhenKilled(t *testing.T) {
	t.Parallel()
	cmd, dir := runHelper(t, "hang")
	pidFile, err := os.ReadFile(filepath.Join(dir, "data", "postmaster.pid"))
	if err != nil {
		t.Fatalf("no running server in %s: %v", dir, err)
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	waitGone(t, dir)
	// The postmaster is gone too, not only its directory.
	var pid int
	if _, err := fmt.Sscan(string(pidFile), &pid); err != nil {
		t.Fatalf("postmaster.pid: %v", err)
	}
	if _, err := os.Stat(fmt.Sprintf("/proc/%d", pid)); err == nil {
		cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if strings.Contains(string(cmdline), dir) {
			t.Fatalf("postmaster %d still running after its test binary was killed", pid)
		}
	}
}

// helperOutput runs the helper process to completion with extra environment.
func helperOutput(t *testing.T, args []string, env ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(os.Args[0], append([]string{"-test.run=^TestHelperProcess$", "-test.count=1", "-test.v"}, args...)...)
	cmd.Env = append(os.Environ(), append([]string{helperEnv + "=exit"}, env...)...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func TestShortSkips(t *testing.T) {
	t.Parallel()
	out, err := helperOutput(t, []string{"-test.short"})
	if err != nil || !strings.Contains(out, "--- SKIP: TestHelperProcess") || !strings.Contains(out, "-short") {
		t.Fatalf("under -short the helper did not skip (err %v):\n%s", err, out)
	}
	if strings.Contains(out, "CLUSTERDIR=") {
		t.Fatalf("under -short a cluster was started:\n%s", out)
	}
}

func TestNoServerFails(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs the test binary")
	}
	out, err := helperOutput(t, nil, pgtest.EnvDatabaseURL+"=", pgtest.EnvBinDir+"="+t.TempDir())
	if err == nil || !strings.Contains(out, "--- FAIL: TestHelperProcess") || !strings.Contains(out, "scripts/install-deps.sh") {
		t.Fatalf("without server binaries the helper did not fail with the install hint (err %v):\n%s", err, out)
	}
}
