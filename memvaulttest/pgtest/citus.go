package pgtest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// EnvRequireCitus names the environment variable that, set to "1", makes
// the Citus tests fail instead of skipping when Citus is not installed or
// its cluster cannot start. .ci/run sets it when it has the Citus source to
// build, so that CI never passes by skipping them.
const EnvRequireCitus = "MEMVAULT_REQUIRE_CITUS"

// CitusShardCount is the shard count of the test coordinator
// (citus.shard_count): more shards than workers, so that threads land on
// different shards of one worker as well as on different workers, and few
// enough that the many distributed tables a suite creates stay cheap.
const CitusShardCount = 4

// CitusWorkers is the number of worker nodes of the test cluster.
const CitusWorkers = 2

// citusInstallHint tells the reader how to get Citus.
const citusInstallHint = "build and install it with `MEMVAULT_CITUS_SRC=<directory holding citus-*.tar.gz> scripts/install-citus.sh` " +
	"(CI passes the vendored copy); set " + EnvRequireCitus + "=1 to fail instead of skipping"

// citusEnvironment is the Citus cluster the Citus tests of this binary use.
type citusEnvironment struct {
	dsn         string        // coordinator, default search_path
	admin       *pgxpool.Pool // creates and drops schemas on the coordinator
	coordinator *cluster
	workers     []*cluster
	skip        string // why the tests skip (Citus absent and not required)
	err         error  // why the cluster is unusable
}

var citusEnv *citusEnvironment // guarded by mu

// CitusSchema is [Schema] on a throwaway Citus cluster: a coordinator and
// [CitusWorkers] workers on loopback, started once per test binary (about
// ten seconds) and stopped by [Main]. The schema is created on the
// coordinator, which propagates it to the workers; tables created in it are
// local to the coordinator until the code under test distributes them.
//
// Without Citus installed the test is skipped with a message saying how to
// install it, or fails when MEMVAULT_REQUIRE_CITUS=1. Under go test -short
// it is skipped.
func CitusSchema(t testing.TB) (pool *pgxpool.Pool, schema string) {
	t.Helper()
	e := citusDatabase(t)
	schema = createSchema(t, e.admin, t.Name())
	return schemaPool(t, e.dsn, schema), schema
}

// CitusSchemaDSN is [SchemaDSN] on the Citus coordinator of [CitusSchema].
func CitusSchemaDSN(t testing.TB) string {
	t.Helper()
	e := citusDatabase(t)
	schema := createSchema(t, e.admin, t.Name())
	dsn, err := WithSearchPath(e.dsn, schema, "public")
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	return dsn
}

// CitusDSN returns the connection string of the Citus coordinator, with the
// default search_path; most tests want [CitusSchema] instead.
func CitusDSN(t testing.TB) string {
	t.Helper()
	return citusDatabase(t).dsn
}

// citusDatabase returns the prepared Citus cluster, skipping or failing t
// when there is none.
func citusDatabase(t testing.TB) *citusEnvironment {
	t.Helper()
	if testing.Short() {
		t.Skip("pgtest: skipping Citus test in -short mode")
	}
	mu.Lock()
	if citusEnv == nil {
		citusEnv = prepareCitus()
	}
	e := citusEnv
	mu.Unlock()
	if e.skip != "" {
		t.Skip(e.skip)
	}
	if e.err != nil {
		t.Fatal(e.err)
	}
	return e
}

// citusRequired reports whether Citus tests must fail rather than skip.
func citusRequired() bool { return os.Getenv(EnvRequireCitus) == "1" }

// prepareCitus starts the workers and the coordinator, creates the citus
// extension on each, registers the workers with the coordinator and creates
// pgvector's extension (which Citus propagates to the workers).
func prepareCitus() *citusEnvironment {
	if !mainCalled.Load() {
		return &citusEnvironment{err: errors.New("pgtest: the package's TestMain must call pgtest.Main(m), which stops the test clusters at exit")}
	}
	if os.Getenv(EnvDatabaseURL) != "" && !citusRequired() {
		return &citusEnvironment{skip: "pgtest: " + EnvDatabaseURL + " is set; the Citus tests start their own cluster and skip here"}
	}
	bin, err := findBinDir()
	if err == nil {
		err = citusInstalled(bin)
	}
	if err != nil {
		if citusRequired() {
			return &citusEnvironment{err: err}
		}
		return &citusEnvironment{skip: err.Error()}
	}

	ctx, cancel := context.WithTimeout(context.Background(), setupTimeout)
	defer cancel()
	e := &citusEnvironment{}
	fail := func(err error) *citusEnvironment {
		e.stop()
		return &citusEnvironment{err: err}
	}
	// node_conninfo: the nodes talk over loopback without TLS; with libpq's
	// default (sslmode=prefer) a server started by root as postgres tries to
	// read root's ~/.postgresql client certificate and fails.
	const preload = "shared_preload_libraries = 'citus'\ncitus.node_conninfo = 'sslmode=disable'\n"
	for range CitusWorkers {
		w, err := startClusterConf(ctx, preload)
		if err != nil {
			return fail(fmt.Errorf("pgtest: start a Citus worker: %w", err))
		}
		e.workers = append(e.workers, w)
	}
	if e.coordinator, err = startClusterConf(ctx, preload+fmt.Sprintf("citus.shard_count = %d\n", CitusShardCount)); err != nil {
		return fail(fmt.Errorf("pgtest: start the Citus coordinator: %w", err))
	}
	e.dsn = e.coordinator.dsn
	for _, c := range append([]*cluster{e.coordinator}, e.workers...) {
		if err := execOn(ctx, c.dsn, "CREATE EXTENSION IF NOT EXISTS citus"); err != nil {
			return fail(fmt.Errorf("pgtest: CREATE EXTENSION citus on port %d: %w", c.port, err))
		}
	}
	cfg, err := pgxpool.ParseConfig(e.dsn)
	if err != nil {
		return fail(fmt.Errorf("pgtest: parse coordinator connection string: %w", err))
	}
	cfg.MaxConns = 4
	if e.admin, err = pgxpool.NewWithConfig(ctx, cfg); err != nil {
		return fail(fmt.Errorf("pgtest: connect to the Citus coordinator: %w", err))
	}
	if _, err := e.admin.Exec(ctx, "SELECT citus_set_coordinator_host('127.0.0.1', $1)", e.coordinator.port); err != nil {
		return fail(fmt.Errorf("pgtest: citus_set_coordinator_host: %w", err))
	}
	for _, w := range e.workers {
		if _, err := e.admin.Exec(ctx, "SELECT citus_add_node('127.0.0.1', $1)", w.port); err != nil {
			return fail(fmt.Errorf("pgtest: citus_add_node (port %d): %w", w.port, err))
		}
	}
	if err := createExtension(ctx, e.admin, "vector", "Citus coordinator in "+bin); err != nil {
		return fail(err)
	}
	return e
}

// citusInstalled reports, as an error saying how to install it, whether
// the Citus extension is missing from the PostgreSQL of bin.
func citusInstalled(bin string) error {
	// pg_ctl may be a link (say /usr/local/bin/pg_ctl) to the server's own
	// bin directory, where pg_config lives.
	if real, err := filepath.EvalSymlinks(filepath.Join(bin, "pg_ctl")); err == nil {
		bin = filepath.Dir(real)
	}
	out, err := exec.Command(filepath.Join(bin, "pg_config"), "--pkglibdir").Output()
	if err != nil {
		return fmt.Errorf("pgtest: Citus: cannot ask %s/pg_config for the library directory (%v); %s", bin, err, citusInstallHint)
	}
	lib := filepath.Join(strings.TrimSpace(string(out)), "citus.so")
	if _, err := os.Stat(lib); err != nil {
		return fmt.Errorf("pgtest: Citus is not installed for the PostgreSQL in %s (no %s); %s", bin, lib, citusInstallHint)
	}
	return nil
}

// execOn runs one statement on a fresh connection to dsn.
func execOn(ctx context.Context, dsn, sql string) error {
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	_, err = conn.Exec(ctx, sql)
	return err
}

// stop stops every node of the cluster.
func (e *citusEnvironment) stop() error {
	if e.admin != nil {
		e.admin.Close()
	}
	var errs []error
	for _, c := range append([]*cluster{e.coordinator}, e.workers...) {
		if c != nil {
			errs = append(errs, c.stop())
		}
	}
	return errors.Join(errs...)
}
