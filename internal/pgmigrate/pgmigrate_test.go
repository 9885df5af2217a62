package pgmigrate_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/memvault/memvault/internal/pgmigrate"
	"github.com/memvault/memvault/memvaulttest/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

func TestLoad(t *testing.T) {
	fsys := fstest.MapFS{
		"m/00.sql":          {Data: []byte("CREATE TABLE {t} (a int)\n")},
		"m/01_index.sql":    {Data: []byte("CREATE INDEX CONCURRENTLY IF NOT EXISTS t_a ON {t} (a)")},
		"m/02.sql":          {Data: []byte("{missing}")},
		"m/README":          {Data: []byte("ignored")},
		"gap/00.sql":        {Data: []byte("a")},
		"gap/02.sql":        {Data: []byte("b")},
		"dup/1.sql":         {Data: []byte("a")},
		"dup/01.sql":        {Data: []byte("b")},
		"dup/00.sql":        {Data: []byte("c")},
		"bad/first.sql":     {Data: []byte("a")},
		"neg/-1.sql":        {Data: []byte("a")},
		"empty/00_none.sql": {Data: []byte("  \n")},
	}
	got, err := pgmigrate.Load(fsys, "m", map[string]string{"t": `"s"."t"`})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{`CREATE TABLE "s"."t" (a int)`, `CREATE INDEX CONCURRENTLY IF NOT EXISTS t_a ON "s"."t" (a)`, "{missing}"}
	if len(got) != len(want) {
		t.Fatalf("Load = %q", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("statement %d = %q, want %q", i, got[i], want[i])
		}
	}
	for _, dir := range []string{"gap", "dup", "bad", "neg", "nope"} {
		if _, err := pgmigrate.Load(fsys, dir, nil); err == nil {
			t.Errorf("Load(%s) succeeded", dir)
		}
	}
	if got, err := pgmigrate.Load(fsys, "empty", nil); err != nil || len(got) != 1 || got[0] != "" {
		t.Fatalf("Load(empty) = %q, %v", got, err)
	}
}

// TestRunInCallersTransaction: inside a caller's transaction the
// migrations run without CONCURRENTLY and vanish with a rollback; on the
// pool they run, are recorded, and a second run does nothing.
func TestRunInCallersTransaction(t *testing.T) {
	ctx := context.Background()
	pool, schema := pgtest.Schema(t)
	set := pgmigrate.Set{Table: "m_migrations", Statements: []string{
		`CREATE TABLE ` + schema + `.m (a int)`,
		`CREATE INDEX CONCURRENTLY IF NOT EXISTS m_a ON ` + schema + `.m (a)`,
		``,
		`ALTER TABLE ` + schema + `.m ADD COLUMN b int`,
	}}
	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := pgmigrate.Run(ctx, tx, schema, set); err != nil {
		t.Fatal(err)
	}
	if v, err := pgmigrate.Versions(ctx, tx, schema, "m_migrations"); err != nil || v["m_migrations"] != 3 {
		t.Fatalf("versions in the transaction = %v, %v", v, err)
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if v, err := pgmigrate.Versions(ctx, pool, schema, "m_migrations"); err != nil || len(v) != 0 {
		t.Fatalf("versions after rollback = %v, %v", v, err)
	}
	for range 2 {
		if err := pgmigrate.Run(ctx, pool, schema, set); err != nil {
			t.Fatal(err)
		}
	}
	var recorded int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM `+schema+`.m_migrations`).Scan(&recorded); err != nil {
		t.Fatal(err)
	}
	if recorded != 3 { // 0, 1 and 3: the empty statement is not recorded
		t.Fatalf("%d versions recorded, want 3", recorded)
	}
	var valid bool
	if err := pool.QueryRow(ctx, `SELECT indisvalid FROM pg_index WHERE indexrelid = to_regclass($1)`, schema+".m_a").Scan(&valid); err != nil || !valid {
		t.Fatalf("index valid %v, %v", valid, err)
	}
}

// TestMigratedSkipsLock: while another session holds the setup lock (a
// setup building an index elsewhere, say), Run on a database already
// migrated returns at once, and Run with a migration to apply waits for the
// lock, whatever the component and the schema.
func TestMigratedSkipsLock(t *testing.T) {
	ctx := context.Background()
	pool, schema := pgtest.Schema(t)
	set := pgmigrate.Set{Table: "m_migrations", Statements: []string{`CREATE TABLE ` + schema + `.m (a int)`, ``}}
	if err := pgmigrate.Run(ctx, pool, schema, set); err != nil {
		t.Fatal(err)
	}
	holder, err := pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Release()
	if _, err := holder.Exec(ctx, `SELECT pg_advisory_lock($1)`, pgmigrate.LockKey); err != nil {
		t.Fatal(err)
	}
	defer holder.Exec(ctx, `SELECT pg_advisory_unlock($1)`, pgmigrate.LockKey) //nolint:errcheck

	// Bounded only so that a regression fails instead of hanging.
	wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := pgmigrate.Run(wctx, pool, schema, set); err != nil {
		t.Fatalf("Run on a migrated schema: %v", err)
	}
	tx, err := pool.Begin(wctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx) //nolint:errcheck
	if err := pgmigrate.Run(wctx, tx, schema, set); err != nil {
		t.Fatalf("Run in a transaction on a migrated schema: %v", err)
	}

	more := set
	more.Statements = append(slices.Clone(set.Statements), `ALTER TABLE `+schema+`.m ADD COLUMN b int`)
	sctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	if err := pgmigrate.Run(sctx, pool, "other_"+schema, more); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Run with a migration to apply while the lock is held = %v, want it waiting for the lock", err)
	}
	if _, err := pool.Exec(ctx, `SELECT 1 FROM `+schema+`.m WHERE b IS NULL`); err == nil {
		t.Fatal("the migration ran without the lock")
	}
}

// tracedPool is a pool on schema whose statements log records.
func tracedPool(t *testing.T, schema string, log *pgtest.StatementLog) *pgxpool.Pool {
	t.Helper()
	dsn, err := pgtest.WithSearchPath(pgtest.DSN(t), schema, "public")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	cfg.ConnConfig.Tracer = log
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return pool
}

// TestRunSendsRunsTogether: consecutive statements that can run in a
// transaction go to the server as one string with their records (a
// CONCURRENTLY index between them alone, as before); every version is
// recorded, and a second Run sends no migration.
func TestRunSendsRunsTogether(t *testing.T) {
	ctx := context.Background()
	_, schema := pgtest.Schema(t)
	var log pgtest.StatementLog
	pool := tracedPool(t, schema, &log)
	q := pgx.Identifier{schema}.Sanitize()
	set := pgmigrate.Set{Table: "m_migrations", Statements: []string{
		`CREATE TABLE ` + q + `.m (a int)`,
		`ALTER TABLE ` + q + `.m ADD COLUMN b int`,
		``,
		`ALTER TABLE ` + q + `.m ADD COLUMN c int`,
		`CREATE INDEX CONCURRENTLY IF NOT EXISTS m_a ON ` + q + `.m (a)`,
		`ALTER TABLE ` + q + `.m ADD COLUMN d int`,
	}}
	if err := pgmigrate.Run(ctx, pool, schema, set); err != nil {
		t.Fatal(err)
	}
	var migrations []string
	for _, s := range log.Take() {
		if strings.Contains(s, ".m ") || strings.Contains(s, ".m(") {
			migrations = append(migrations, s)
		}
	}
	if len(migrations) != 3 {
		t.Fatalf("migrations sent in %d statements, want 3 (v0-v3, v4, v5):\n%s", len(migrations), strings.Join(migrations, "\n---\n"))
	}
	if !strings.Contains(migrations[0], "ADD COLUMN c") || !strings.Contains(migrations[0], "VALUES (3)") {
		t.Fatalf("first run = %q, want v0, v1 and v3 with their records", migrations[0])
	}
	var versions []int
	rows, err := pool.Query(ctx, `SELECT v FROM `+q+`.m_migrations ORDER BY v`)
	if err != nil {
		t.Fatal(err)
	}
	versions, err = pgx.CollectRows(rows, pgx.RowTo[int])
	if err != nil || !slices.Equal(versions, []int{0, 1, 3, 4, 5}) {
		t.Fatalf("recorded %v, %v; want [0 1 3 4 5]", versions, err)
	}
	if _, err := pool.Exec(ctx, `SELECT a, b, c, d FROM `+q+`.m`); err != nil {
		t.Fatal(err)
	}
	log.Take()
	if err := pgmigrate.Run(ctx, pool, schema, set); err != nil {
		t.Fatal(err)
	}
	for _, s := range log.Take() {
		if strings.Contains(s, "ADD COLUMN") {
			t.Fatalf("a second Run sent %q", s)
		}
	}
}

// TestRunRefusedStatementNamed: when the server refuses a statement of a
// run, the versions before it are applied and recorded, the error names
// the refused version, and nothing after it runs; a later Run with the
// statement fixed goes on from there.
func TestRunRefusedStatementNamed(t *testing.T) {
	ctx := context.Background()
	pool, schema := pgtest.Schema(t)
	q := pgx.Identifier{schema}.Sanitize()
	set := pgmigrate.Set{Table: "m_migrations", Statements: []string{
		`CREATE TABLE ` + q + `.m (a int)`,
		`ALTER TABLE ` + q + `.m ADD COLUMN b int`,
		`ALTER TABLE ` + q + `.nope ADD COLUMN c int`,
		`ALTER TABLE ` + q + `.m ADD COLUMN d int`,
	}}
	err := pgmigrate.Run(ctx, pool, schema, set)
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != "42P01" || !strings.Contains(err.Error(), "m_migrations v2:") {
		t.Fatalf("Run = %v, want the undefined table of v2 named", err)
	}
	if v, err := pgmigrate.Versions(ctx, pool, schema, "m_migrations"); err != nil || v["m_migrations"] != 1 {
		t.Fatalf("versions = %v, %v; want 1", v, err)
	}
	if _, err := pool.Exec(ctx, `SELECT a, b FROM `+q+`.m`); err != nil {
		t.Fatalf("v0 and v1 not applied: %v", err)
	}
	if _, err := pool.Exec(ctx, `SELECT d FROM `+q+`.m`); err == nil {
		t.Fatal("v3 ran after v2 failed")
	}
	set.Statements[2] = `ALTER TABLE ` + q + `.m ADD COLUMN c int`
	if err := pgmigrate.Run(ctx, pool, schema, set); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `SELECT a, b, c, d FROM `+q+`.m`); err != nil {
		t.Fatal(err)
	}
}
