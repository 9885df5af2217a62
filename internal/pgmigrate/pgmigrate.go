package pgmigrate

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"io/fs"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/memvault/memvault/internal/pgdb"
)

// Set is one tracking table and its migrations: Statements[i] is recorded
// as v = i once it ran. An empty statement is skipped and not recorded
// (LangGraph's flat vector index).
type Set struct {
	Table      string // unqualified
	Statements []string
}

// Load reads a set's statements from dir in fsys: files named
// "<version>.sql" (or "<version>_<words>.sql"), numbered from 0 without
// gaps, each one statement, with every "{name}" replaced by vars[name].
func Load(fsys fs.FS, dir string, vars map[string]string) ([]string, error) {
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return nil, err
	}
	byVersion := map[int]string{}
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".sql") {
			continue
		}
		num, _, _ := strings.Cut(strings.TrimSuffix(name, ".sql"), "_")
		v, err := strconv.Atoi(num)
		if err != nil || v < 0 {
			return nil, fmt.Errorf("pgmigrate: %s: not <version>.sql", path.Join(dir, name))
		}
		if _, dup := byVersion[v]; dup {
			return nil, fmt.Errorf("pgmigrate: %s: version %d twice", dir, v)
		}
		b, err := fs.ReadFile(fsys, path.Join(dir, name))
		if err != nil {
			return nil, err
		}
		byVersion[v] = string(b)
	}
	out := make([]string, len(byVersion))
	for v, text := range byVersion {
		if v >= len(out) {
			return nil, fmt.Errorf("pgmigrate: %s: versions are not 0..%d", dir, len(out)-1)
		}
		out[v] = strings.TrimSpace(expand(text, vars))
	}
	return out, nil
}

var placeholder = regexp.MustCompile(`\{([a-z_]+)\}`)

func expand(text string, vars map[string]string) string {
	return placeholder.ReplaceAllStringFunc(text, func(m string) string {
		if v, ok := vars[m[1:len(m)-1]]; ok {
			return v
		}
		return m
	})
}

// Conn is a single connection or transaction: *pgx.Conn, *pgxpool.Conn,
// pgx.Tx.
type Conn = pgdb.Querier

// LockKey is the PostgreSQL advisory lock every memvault setup holds while
// it migrates: one key for the whole database, whatever the component and
// the schema. CREATE ... IF NOT EXISTS is not safe under concurrency (two
// sessions both see no table, and the second fails with 23505 on a catalog
// index, or 42P07), and the objects of one component are not the only ones
// it creates: CREATE SCHEMA (a schema two components share, or "" and
// "public" naming the same one) and CREATE EXTENSION vector (one per
// database) are shared, so per-component or per-schema keys would still let
// two setups collide.
var LockKey = lockKey("memvault/setup")

// Run applies the sets in order on db: a *pgxpool.Pool (one of its
// connections is held for the whole run), a pgx.Tx (a caller's
// transaction: statements run in it, CONCURRENTLY dropped), or a single
// connection. schema ("" for the search path) is created when missing and
// qualifies the tracking tables.
//
// Every statement, the schema's and the tracking tables' included, runs
// holding LockKey, so that setups from any number of processes may start
// at once. When every set's last statement is already recorded, Run
// returns without taking the lock: versions only grow, so a database found
// migrated stays so, and opening one costs a few reads instead of a wait
// behind a setup building an index elsewhere.
func Run(ctx context.Context, db any, schema string, sets ...Set) (err error) {
	var conn Conn
	inTx := false
	switch x := db.(type) {
	case pgx.Tx:
		conn, inTx = x, true
	case *pgxpool.Pool:
		c, err := x.Acquire(ctx)
		if err != nil {
			return fmt.Errorf("acquire connection: %w", err)
		}
		defer c.Release()
		conn = c
	case Conn:
		conn = x
	default:
		return fmt.Errorf("pgmigrate: cannot migrate over %T", db)
	}
	if done, err := migrated(ctx, conn, schema, sets); err != nil || done {
		return err
	}
	if inTx {
		if err := pollLock(ctx, conn, `SELECT pg_try_advisory_xact_lock($1)`); err != nil {
			return fmt.Errorf("lock: %w", err)
		}
	} else {
		if err := pollLock(ctx, conn, `SELECT pg_try_advisory_lock($1)`); err != nil {
			return fmt.Errorf("lock: %w", err)
		}
		defer func() {
			// Unlock even when ctx is done: a pooled connection must not go
			// back to the pool holding the lock.
			uctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
			defer cancel()
			if _, uerr := conn.Exec(uctx, `SELECT pg_advisory_unlock($1)`, LockKey); uerr != nil {
				if pc, ok := conn.(*pgxpool.Conn); ok {
					_ = pc.Conn().Close(uctx) // a closed connection is dropped by the pool
				}
				if err == nil {
					err = fmt.Errorf("unlock: %w", uerr)
				}
			}
		}()
	}
	if schema != "" {
		// Checked first: CREATE SCHEMA IF NOT EXISTS needs the CREATE
		// privilege on the database even when the schema exists.
		var exists bool
		if err := conn.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = $1)`, schema).Scan(&exists); err != nil {
			return fmt.Errorf("look up schema: %w", err)
		}
		if !exists {
			if _, err := conn.Exec(ctx, createSchema(schema)); err != nil {
				return fmt.Errorf("create schema: %w", err)
			}
		}
	}
	for _, set := range sets {
		if err := migrate(ctx, conn, inTx, schema, set); err != nil {
			return err
		}
	}
	return nil
}

// migrated reports whether every set has its last non-empty statement
// recorded (the tracking table of a set whose statements are all empty is
// not needed).
func migrated(ctx context.Context, q Querier, schema string, sets []Set) (bool, error) {
	for _, set := range sets {
		last := -1
		for i, stmt := range set.Statements {
			if stmt != "" {
				last = i
			}
		}
		if last < 0 {
			continue
		}
		v, err := Versions(ctx, q, schema, set.Table)
		if err != nil {
			return false, fmt.Errorf("read %w", err)
		}
		if got, ok := v[set.Table]; !ok || got < last {
			return false, nil
		}
	}
	return true, nil
}

// createSchema is the statement that creates schema.
func createSchema(schema string) string {
	return `CREATE SCHEMA IF NOT EXISTS ` + pgx.Identifier{schema}.Sanitize()
}

// trackingTable is the statement that creates a set's tracking table tbl
// (quoted as the statement needs it).
func trackingTable(tbl string) string {
	return `CREATE TABLE IF NOT EXISTS ` + tbl + ` (v INTEGER PRIMARY KEY)`
}

// Statements lists the DDL Run runs for sets on an empty database, one
// statement per line, for review or for applying by hand: the schema's
// creation (schema "" : none), then each set's tracking table and its
// migrations, each prefixed with the set's table and version. A tracking
// table is named as a backend's own statements name tables: the schema
// quoted, the table as the set names it.
func Statements(schema string, sets ...Set) []string {
	var out []string
	prefix := ""
	if schema != "" {
		prefix = pgx.Identifier{schema}.Sanitize() + "."
		out = append(out, createSchema(schema))
	}
	for _, set := range sets {
		out = append(out, trackingTable(prefix+set.Table))
		for v, m := range set.Statements {
			if m != "" {
				out = append(out, fmt.Sprintf("%s %d: %s", set.Table, v, oneLine(m)))
			}
		}
	}
	return out
}

// oneLine collapses whitespace runs to single spaces.
func oneLine(sql string) string {
	sql = strings.Join(strings.Fields(sql), " ")
	sql = strings.ReplaceAll(sql, "( ", "(")
	return strings.ReplaceAll(sql, " )", ")")
}

// migrate creates the set's tracking table, then runs every statement
// above the highest recorded version, recording each after it ran.
//
// Outside a caller's transaction, consecutive statements that can run in a
// transaction block (all but CREATE INDEX CONCURRENTLY) go to the server as
// one simple-protocol string, each followed by the INSERT recording it: one
// round trip instead of two per version (a fresh checkpointer schema took
// ~36 round trips, most of Setup's time), and a statement and its record
// commit together. The string runs as one implicit transaction, so a
// statement the server refuses leaves none of its run applied; the run is
// then applied one statement at a time, as before, so that the error names
// the version that failed and the versions before it stay applied.
func migrate(ctx context.Context, conn Conn, inTx bool, schema string, set Set) error {
	tbl := pgdb.Ident(schema, set.Table)
	if _, err := conn.Exec(ctx, trackingTable(tbl), pgx.QueryExecModeSimpleProtocol); err != nil {
		return fmt.Errorf("%s: %w", set.Table, err)
	}
	version := -1
	var v *int32
	err := conn.QueryRow(ctx, `SELECT max(v) FROM `+tbl).Scan(&v)
	if err != nil {
		return fmt.Errorf("read %s: %w", set.Table, err)
	}
	if v != nil {
		version = int(*v)
	}
	var run []int // versions waiting to be sent together
	flush := func() error {
		defer func() { run = run[:0] }()
		if len(run) > 1 {
			err := execRun(ctx, conn, tbl, set, run)
			var pe *pgconn.PgError
			if err == nil || !errors.As(err, &pe) {
				return err
			}
			// Refused by the server: nothing of the run is applied; find
			// the statement one at a time.
		}
		for _, i := range run {
			if err := execOne(ctx, conn, inTx, schema, tbl, set, i); err != nil {
				return err
			}
		}
		return nil
	}
	for i := version + 1; i < len(set.Statements); i++ {
		stmt := set.Statements[i]
		if stmt == "" {
			continue
		}
		if !inTx && !strings.Contains(stmt, "CONCURRENTLY") {
			run = append(run, i)
			continue
		}
		if err := flush(); err != nil {
			return err
		}
		if err := execOne(ctx, conn, inTx, schema, tbl, set, i); err != nil {
			return err
		}
	}
	return flush()
}

// execRun runs the statements of versions (more than one) and their
// records as one simple-protocol string, one implicit transaction.
func execRun(ctx context.Context, conn Conn, tbl string, set Set, versions []int) error {
	var b strings.Builder
	for _, i := range versions {
		b.WriteString(set.Statements[i])
		b.WriteString(";\n")
		fmt.Fprintf(&b, "INSERT INTO %s (v) VALUES (%d) ON CONFLICT (v) DO NOTHING;\n", tbl, i)
	}
	if _, err := conn.Exec(ctx, b.String(), pgx.QueryExecModeSimpleProtocol); err != nil {
		return fmt.Errorf("%s v%d-v%d: %w", set.Table, versions[0], versions[len(versions)-1], err)
	}
	return nil
}

// execOne runs the statement of version i of set, then records it.
func execOne(ctx context.Context, conn Conn, inTx bool, schema, tbl string, set Set, i int) error {
	stmt := set.Statements[i]
	if inTx {
		stmt = strings.Replace(stmt, "INDEX CONCURRENTLY", "INDEX", 1)
	} else if err := dropInvalidIndex(ctx, conn, schema, stmt); err != nil {
		return fmt.Errorf("%s v%d: %w", set.Table, i, err)
	}
	if err := exec(ctx, conn, stmt); err != nil {
		return fmt.Errorf("%s v%d: %w", set.Table, i, err)
	}
	if _, err := conn.Exec(ctx, `INSERT INTO `+tbl+` (v) VALUES ($1) ON CONFLICT (v) DO NOTHING`, i); err != nil {
		return fmt.Errorf("record %s v%d: %w", set.Table, i, err)
	}
	return nil
}

var concurrentIndex = regexp.MustCompile(`INDEX CONCURRENTLY IF NOT EXISTS (\w+) ON`)

// dropInvalidIndex drops the index stmt creates if a CREATE INDEX
// CONCURRENTLY that failed or was interrupted left it behind invalid: IF NOT
// EXISTS would otherwise skip it and record the migration as done with an
// index PostgreSQL never uses.
func dropInvalidIndex(ctx context.Context, conn Conn, schema, stmt string) error {
	m := concurrentIndex.FindStringSubmatch(stmt)
	if m == nil {
		return nil
	}
	var invalid bool
	err := conn.QueryRow(ctx, `SELECT NOT i.indisvalid FROM pg_index i
JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE c.relname = $1 AND n.nspname = coalesce(nullif($2, ''), current_schema())`, m[1], schema).Scan(&invalid)
	if errors.Is(err, pgx.ErrNoRows) || (err == nil && !invalid) {
		return nil
	}
	if err != nil {
		return err
	}
	_, err = conn.Exec(ctx, `DROP INDEX CONCURRENTLY IF EXISTS `+pgdb.Ident(schema, m[1]), pgx.QueryExecModeSimpleProtocol)
	return err
}

// exec runs one DDL statement with the simple protocol (DDL has no
// parameters and must not be cached as a prepared statement).
func exec(ctx context.Context, conn Conn, stmt string) error {
	_, err := conn.Exec(ctx, stmt, pgx.QueryExecModeSimpleProtocol)
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Code == "42P07" && strings.Contains(stmt, "CONCURRENTLY") {
		// duplicate_table: a concurrent CREATE INDEX CONCURRENTLY from a
		// process not holding this lock (LangGraph's setup) got there first.
		return nil
	}
	return err
}

// pollLock takes LockKey on conn with try, a pg_try_advisory_lock or
// pg_try_advisory_xact_lock query, polled instead of blocking in
// pg_advisory_lock: CREATE INDEX CONCURRENTLY waits for every transaction
// whose snapshot is older than it, including that of a session blocked in
// pg_advisory_lock waiting for the CREATE INDEX's own session, which
// PostgreSQL reports as a deadlock. Between two polls a session holds no
// snapshot.
func pollLock(ctx context.Context, conn Conn, try string) error {
	wait := 5 * time.Millisecond
	for {
		var ok bool
		if err := conn.QueryRow(ctx, try, LockKey).Scan(&ok); err != nil {
			return err
		}
		if ok {
			return nil
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
		wait = min(2*wait, 250*time.Millisecond)
	}
}

func lockKey(name string) int64 {
	h := fnv.New64a()
	h.Write([]byte(name))
	return int64(h.Sum64())
}

// Querier runs a query; *pgxpool.Pool, *pgx.Conn and pgx.Tx implement it.
type Querier = pgdb.Querier

// Versions returns the highest recorded version of each of tables in
// schema; a table that does not exist yet, or records nothing, is left out.
func Versions(ctx context.Context, q Querier, schema string, tables ...string) (map[string]int, error) {
	out := map[string]int{}
	for _, t := range slices.Sorted(slices.Values(tables)) {
		var exists bool
		if err := q.QueryRow(ctx, `SELECT to_regclass($1) IS NOT NULL`, pgdb.Ident(schema, t)).Scan(&exists); err != nil {
			return nil, fmt.Errorf("%s: %w", t, err)
		}
		if !exists {
			continue
		}
		var v *int
		if err := q.QueryRow(ctx, `SELECT max(v) FROM `+pgdb.Ident(schema, t)).Scan(&v); err != nil {
			return nil, fmt.Errorf("%s: %w", t, err)
		}
		if v != nil {
			out[t] = *v
		}
	}
	return out, nil
}
