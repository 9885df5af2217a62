package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// EnvDatabaseURL names the environment variable holding the connection string
// of an existing database to test against instead of a throwaway cluster.
const EnvDatabaseURL = "TEST_DATABASE_URL"

// EnvBinDir names the environment variable that, when set, is the directory
// of the PostgreSQL server binaries to use for the throwaway cluster.
const EnvBinDir = "PGTEST_BINDIR"

// installHint tells the reader how to get a PostgreSQL to test against.
const installHint = "run scripts/install-deps.sh, or set " + EnvDatabaseURL + " to a PostgreSQL database with pgvector"

// setupTimeout bounds starting the cluster and preparing the database.
const setupTimeout = 2 * time.Minute

// opTimeout bounds each schema creation and drop.
const opTimeout = 30 * time.Second

// maxIdentLen is PostgreSQL's limit on identifier length, in bytes.
const maxIdentLen = 63

var (
	mainCalled atomic.Bool

	mu  sync.Mutex
	env *environment // the database, prepared on first use
)

// environment is the database the tests of this binary use.
type environment struct {
	dsn     string        // connection string of the database, default search_path
	admin   *pgxpool.Pool // creates and drops schemas
	cluster *cluster      // the throwaway cluster, or nil with TEST_DATABASE_URL
	err     error         // why the database is unusable, if it is
}

// Main runs the tests and exits with their status, after stopping the
// throwaway cluster, if one was started. Packages using pgtest must call it
// from their TestMain:
//
//	func TestMain(m *testing.M) { pgtest.Main(m) }
func Main(m *testing.M) {
	mainCalled.Store(true)
	code := m.Run()
	if err := shutdown(); err != nil {
		fmt.Fprintf(os.Stderr, "%v\n", err)
		if code == 0 {
			code = 1
		}
	}
	os.Exit(code)
}

// shutdown releases the databases and stops the clusters.
func shutdown() error {
	mu.Lock()
	defer mu.Unlock()
	var citusErr error
	if citusEnv != nil {
		citusErr = citusEnv.stop()
		citusEnv = &citusEnvironment{err: errors.New("pgtest: the Citus cluster is shut down")}
	}
	if env == nil {
		return citusErr
	}
	if env.admin != nil {
		env.admin.Close()
	}
	var err error
	if env.cluster != nil {
		err = env.cluster.stop()
	}
	env = &environment{err: errors.New("pgtest: the database is shut down")}
	return errors.Join(err, citusErr)
}

// DSN returns the connection string of the test database, with the default
// search_path. Tests sharing it must not step on each other's objects; most
// tests want [Schema], [Pool] or [SchemaDSN] instead.
//
// Under go test -short, DSN skips the test; without a usable PostgreSQL it
// fails the test with a message saying how to install one.
func DSN(t testing.TB) string {
	t.Helper()
	return database(t).dsn
}

// Schema creates a schema of the test's own, dropped with everything in it
// when the test ends, and returns a pool whose connections have search_path
// set to that schema then public (where the vector type lives). The pool is
// closed when the test ends. Every call makes a new schema.
func Schema(t testing.TB) (pool *pgxpool.Pool, schema string) {
	t.Helper()
	e := database(t)
	schema = newSchema(t, e)
	return schemaPool(t, e.dsn, schema), schema
}

// schemaPool opens a pool on dsn whose connections have search_path set
// to schema then public, closed when t ends (before the schema is dropped).
func schemaPool(t testing.TB, dsn, schema string) *pgxpool.Pool {
	t.Helper()
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		t.Fatalf("pgtest: parse connection string: %v", err)
	}
	cfg.ConnConfig.RuntimeParams["search_path"] = searchPath([]string{schema, "public"})
	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		t.Fatalf("pgtest: open pool: %v", err)
	}
	t.Cleanup(pool.Close) // runs before the schema is dropped
	return pool
}

// Pool is [Schema] without the schema's name.
func Pool(t testing.TB) *pgxpool.Pool {
	t.Helper()
	pool, _ := Schema(t)
	return pool
}

// SchemaDSN creates a schema like [Schema] does and returns a connection
// string whose search_path is that schema then public, for code that opens
// its own connections. Those must be closed before the test ends (register
// their Close with t.Cleanup after calling SchemaDSN), since the schema is
// dropped then.
func SchemaDSN(t testing.TB) string {
	t.Helper()
	e := database(t)
	schema := newSchema(t, e)
	dsn, err := WithSearchPath(e.dsn, schema, "public")
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	return dsn
}

// WithSearchPath returns dsn, a URL ("postgres://…") or key/value
// ("host=… dbname=…") connection string, with its search_path set to the
// given schemas through the standard options parameter, which pgx and libpq
// both understand. In a URL, options already present are kept and the
// search_path setting is appended; in a key/value string, an options keyword
// already present is overridden.
func WithSearchPath(dsn string, schemas ...string) (string, error) {
	if len(schemas) == 0 {
		return "", errors.New("pgtest: WithSearchPath needs at least one schema")
	}
	for _, s := range schemas {
		if s == "" || strings.ContainsRune(s, 0) {
			return "", fmt.Errorf("pgtest: invalid schema name %q", s)
		}
	}
	// The server splits options on unescaped whitespace; a backslash escapes.
	opt := "-csearch_path=" + searchPath(schemas)
	opt = strings.NewReplacer(`\`, `\\`, " ", `\ `, "\t", "\\\t", "\n", "\\\n", "\r", "\\\r").Replace(opt)

	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		u, err := url.Parse(dsn)
		if err != nil {
			return "", fmt.Errorf("pgtest: parse connection URL: %w", err)
		}
		q := u.Query()
		if old := q.Get("options"); old != "" {
			opt = old + " " + opt
		}
		q.Set("options", opt)
		// Encode writes spaces as "+", which libpq and pgx read as a plus
		// sign; a plus sign itself is "%2B".
		u.RawQuery = strings.ReplaceAll(q.Encode(), "+", "%20")
		return u.String(), nil
	}
	// Key/value form: quote the value, escaping quotes and backslashes.
	quoted := "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(opt) + "'"
	if strings.TrimSpace(dsn) == "" {
		return "options=" + quoted, nil
	}
	return dsn + " options=" + quoted, nil
}

// searchPath renders schemas as a search_path value, quoting only the names
// that need it.
func searchPath(schemas []string) string {
	parts := make([]string, len(schemas))
	for i, s := range schemas {
		if plainIdent(s) {
			parts[i] = s
		} else {
			parts[i] = pgx.Identifier{s}.Sanitize()
		}
	}
	return strings.Join(parts, ",")
}

// plainIdent reports whether s reads as itself in a search_path without quotes.
func plainIdent(s string) bool {
	if s == "" || len(s) > maxIdentLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c == '_':
		case c >= '0' && c <= '9', c == '$':
			if i == 0 {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// database returns the prepared test database, skipping or failing t when
// there is none.
func database(t testing.TB) *environment {
	t.Helper()
	if testing.Short() {
		t.Skip("pgtest: skipping PostgreSQL test in -short mode")
	}
	mu.Lock()
	if env == nil {
		env = prepare()
	}
	e := env
	mu.Unlock()
	if e.err != nil {
		t.Fatal(e.err)
	}
	return e
}

// prepare connects to TEST_DATABASE_URL or starts a throwaway cluster, and
// creates the vector extension.
func prepare() *environment {
	if !mainCalled.Load() {
		return &environment{err: errors.New("pgtest: the package's TestMain must call pgtest.Main(m), which stops the test database at exit")}
	}
	ctx, cancel := context.WithTimeout(context.Background(), setupTimeout)
	defer cancel()

	e := &environment{dsn: os.Getenv(EnvDatabaseURL)}
	if e.dsn == "" {
		c, err := startCluster(ctx)
		if err != nil {
			return &environment{err: err}
		}
		e.cluster, e.dsn = c, c.dsn
	}
	fail := func(err error) *environment {
		if e.admin != nil {
			e.admin.Close()
		}
		if e.cluster != nil {
			if serr := e.cluster.stop(); serr != nil {
				err = fmt.Errorf("%w (and %v)", err, serr)
			}
		}
		return &environment{err: err}
	}

	cfg, err := pgxpool.ParseConfig(e.dsn)
	if err != nil {
		return fail(fmt.Errorf("pgtest: parse %s: %w", EnvDatabaseURL, err))
	}
	cfg.MaxConns = 4
	if e.admin, err = pgxpool.NewWithConfig(ctx, cfg); err == nil {
		err = e.admin.Ping(ctx)
	}
	if err != nil {
		return fail(fmt.Errorf("pgtest: connect to the test database: %w", err))
	}
	where := EnvDatabaseURL
	if e.cluster != nil {
		where = "PostgreSQL in " + e.cluster.bin
	}
	if err := createExtension(ctx, e.admin, "vector", where); err != nil {
		return fail(err)
	}
	return e
}

// extensionLockKey serialises CREATE EXTENSION among test binaries sharing a
// database (go test runs packages in parallel).
const extensionLockKey = 0x6d656d7661756c74 // "memvault"

// createExtension creates an extension (pgvector's is "vector") in the
// public schema; where names the server in the error.
func createExtension(ctx context.Context, admin *pgxpool.Pool, name, where string) error {
	err := pgx.BeginFunc(ctx, admin, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", int64(extensionLockKey)); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, "CREATE EXTENSION IF NOT EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH SCHEMA public")
		return err
	})
	if err != nil {
		return fmt.Errorf("pgtest: the %s extension is not available (%s); %s: %w", name, where, installHint, err)
	}
	return nil
}

// newSchema creates a schema for t, dropped when t ends, and returns its name.
func newSchema(t testing.TB, e *environment) string {
	t.Helper()
	return createSchema(t, e.admin, t.Name())
}

// createSchema creates a schema named after testName through admin,
// dropped when t ends, and returns its name.
func createSchema(t testing.TB, admin *pgxpool.Pool, testName string) string {
	t.Helper()
	name := schemaName(testName, randomSuffix())
	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	if _, err := admin.Exec(ctx, "CREATE SCHEMA "+pgx.Identifier{name}.Sanitize()); err != nil {
		t.Fatalf("pgtest: create schema %s: %v", name, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
		defer cancel()
		if _, err := admin.Exec(ctx, "DROP SCHEMA IF EXISTS "+pgx.Identifier{name}.Sanitize()+" CASCADE"); err != nil {
			t.Errorf("pgtest: drop schema %s: %v", name, err)
		}
	})
	return name
}

// randomSuffix returns 8 random hex digits.
func randomSuffix() string {
	var b [4]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	return hex.EncodeToString(b[:])
}

// schemaName returns "t_<test name>_<suffix>": the test name lowercased, runs
// of other characters than [a-z0-9] turned into one underscore, cut so that
// the whole fits in PostgreSQL's 63-byte identifiers.
func schemaName(testName, suffix string) string {
	const prefix = "t_"
	room := maxIdentLen - len(prefix) - 1 - len(suffix)
	var b strings.Builder
	under := false
	for _, r := range strings.ToLower(testName) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			if b.Len() >= room {
				break
			}
			b.WriteRune(r)
			under = false
		} else if !under && b.Len() > 0 {
			if b.Len() >= room {
				break
			}
			b.WriteByte('_')
			under = true
		}
	}
	mid := strings.TrimSuffix(b.String(), "_")
	if mid == "" {
		return prefix + suffix
	}
	return prefix + mid + "_" + suffix
}

// ChildApp is the application_name ChildDSN gives a child process's
// connections, so that WaitQuiet can wait until they are gone.
const ChildApp = "memvault_test_child"

// ChildDSN returns dsn (a URL or a key/value string) with its
// application_name set to ChildApp: the connection string to hand a child
// process that a test kills.
func ChildDSN(dsn string) string {
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		if u, err := url.Parse(dsn); err == nil {
			q := u.Query()
			q.Set("application_name", ChildApp)
			u.RawQuery = strings.ReplaceAll(q.Encode(), "+", "%20")
			return u.String()
		}
	}
	return dsn + " application_name=" + ChildApp
}

// WaitQuiet waits until no other connection to pool's database is running
// a statement or holding a transaction open, and no connection of a child
// process (ChildDSN) is left. After a test kills a client process (kill
// -9), the server may still be executing — even committing — the
// statement the process sent last, until it notices the connection is
// gone, and it may not have read that statement yet: the connection then
// shows as idle while the batch waits in its socket, and commits after a
// check of the state alone. A test that checks what the killed process
// left hands the child ChildDSN and calls WaitQuiet first, so that nothing
// lands after its check. It fails t after 30 s.
func WaitQuiet(t testing.TB, pool *pgxpool.Pool) {
	t.Helper()
	ctx := context.Background()
	deadline := time.Now().Add(30 * time.Second)
	for {
		var busy int
		err := pool.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity
			WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_type = 'client backend'
			AND (state IN ('active', 'idle in transaction', 'idle in transaction (aborted)', 'fastpath function call')
				OR application_name = $1)`, ChildApp).Scan(&busy)
		if err != nil {
			t.Fatalf("pgtest: WaitQuiet: %v", err)
		}
		if busy == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("pgtest: WaitQuiet: %d other connections still busy after 30 s", busy)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
