package pgsaver_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/checkpointer/pgsaver"
	"github.com/memvault/memvault/memvaulttest/pgtest"
)

// indexes returns the names of the indexes of the test schema's tables.
func indexes(t testing.TB, q interface {
	Query(context.Context, string, ...any) (pgx.Rows, error)
}, schema string) []string {
	t.Helper()
	rows, err := q.Query(context.Background(), `SELECT indexname FROM pg_indexes WHERE schemaname = $1 ORDER BY indexname`, schema)
	if err != nil {
		t.Fatal(err)
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	return names
}

var wantIndexes = []string{
	"checkpoint_blobs_pkey", "checkpoint_blobs_thread_id_idx", "checkpoint_migrations_pkey",
	"checkpoint_writes_pkey", "checkpoint_writes_thread_id_idx", "checkpoints_pkey",
	"checkpoints_thread_id_checkpoint_id_idx", "checkpoints_thread_id_idx", "memvault_checkpoint_migrations_pkey",
}

func TestSetupIdempotent(t *testing.T) {
	ctx := context.Background()
	pool, schema := pgtest.Schema(t)
	s, err := pgsaver.New(pool, pgsaver.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := s.Setup(ctx); err != nil {
			t.Fatal(err)
		}
		if got := migrations(t, pool, "checkpoint_migrations"); !slices.Equal(got, seq(10)) {
			t.Fatalf("checkpoint_migrations = %v", got)
		}
		if got := migrations(t, pool, "memvault_checkpoint_migrations"); !slices.Equal(got, seq(2)) {
			t.Fatalf("memvault_checkpoint_migrations = %v", got)
		}
		if got := indexes(t, pool, schema); !slices.Equal(got, wantIndexes) {
			t.Fatalf("indexes = %v, want %v", got, wantIndexes)
		}
	}
	var col string
	if err := pool.QueryRow(ctx, `SELECT column_default FROM information_schema.columns WHERE table_schema = $1 AND table_name = 'checkpoint_writes' AND column_name = 'task_path'`, schema).Scan(&col); err != nil {
		t.Fatalf("task_path column: %v", err)
	}
}

// TestSetupOnPythonDatabase: a database whose checkpoint_migrations records
// LangGraph's 0..9 gets none of LangGraph's statements again (an index the
// operator dropped stays dropped), only memvault's own migrations.
func TestSetupOnPythonDatabase(t *testing.T) {
	ctx := context.Background()
	pool, schema := pgtest.Schema(t)
	execFile(t, pool, "python_schema.sql")
	if _, err := pool.Exec(ctx, `DROP INDEX checkpoints_thread_id_idx`); err != nil {
		t.Fatal(err)
	}
	s, err := pgsaver.New(pool, pgsaver.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Setup(ctx); err != nil {
		t.Fatal(err)
	}
	if got := migrations(t, pool, "checkpoint_migrations"); !slices.Equal(got, seq(10)) {
		t.Fatalf("checkpoint_migrations = %v", got)
	}
	got := indexes(t, pool, schema)
	if slices.Contains(got, "checkpoints_thread_id_idx") {
		t.Error("Setup re-ran a LangGraph migration recorded as done")
	}
	if !slices.Contains(got, "checkpoints_thread_id_checkpoint_id_idx") {
		t.Errorf("memvault migration missing: %v", got)
	}
}

// TestSetupConcurrent runs Setup from several pools (as several processes
// would) at once, on the search_path schema and on a named one.
func TestSetupConcurrent(t *testing.T) {
	for _, named := range []bool{false, true} {
		t.Run(map[bool]string{false: "search_path", true: "schema option"}[named], func(t *testing.T) {
			ctx := context.Background()
			dsn := pgtest.SchemaDSN(t)
			opts := pgsaver.Options{}
			if named {
				opts.Schema = "mv setup " + t.Name()
			}
			const n = 6
			pools := make([]*pgxpool.Pool, n)
			for i := range pools {
				p, err := pgxpool.New(ctx, dsn)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(p.Close)
				pools[i] = p
			}
			if named {
				t.Cleanup(func() {
					_, _ = pools[0].Exec(context.Background(), `DROP SCHEMA IF EXISTS `+pgx.Identifier{opts.Schema}.Sanitize()+` CASCADE`)
				})
			}
			var wg sync.WaitGroup
			errs := make([]error, n)
			for i, p := range pools {
				wg.Go(func() {
					s, err := pgsaver.New(p, opts)
					if err == nil {
						err = s.Setup(ctx)
					}
					errs[i] = err
				})
			}
			wg.Wait()
			for i, err := range errs {
				if err != nil {
					t.Errorf("setup %d: %v", i, err)
				}
			}
			table := "checkpoint_migrations"
			if named {
				table = pgx.Identifier{opts.Schema, table}.Sanitize()
			}
			if got := migrations(t, pools[0], table); !slices.Equal(got, seq(10)) {
				t.Fatalf("%s = %v", table, got)
			}
			// The lock is released: a later Setup does not block.
			s, _ := pgsaver.New(pools[1], opts)
			sctx, cancel := context.WithTimeout(ctx, time.Minute)
			defer cancel()
			if err := s.Setup(sctx); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Put(ctx, checkpointer.Config{ThreadID: "t"}, &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(0)}, nil, nil); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestSetupInTransaction: over a pgx.Tx, Setup runs inside the caller's
// transaction (indexes without CONCURRENTLY) and rolls back with it.
func TestSetupInTransaction(t *testing.T) {
	ctx := context.Background()
	pool, schema := pgtest.Schema(t)
	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	s, err := pgsaver.New(tx, pgsaver.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Setup(ctx); err != nil {
		t.Fatal(err)
	}
	if got := indexes(t, tx, schema); !slices.Equal(got, wantIndexes) {
		t.Fatalf("indexes in tx = %v", got)
	}
	if _, err := s.Put(ctx, checkpointer.Config{ThreadID: "t"}, &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(0)}, nil, nil); err != nil {
		t.Fatal(err)
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if got := indexes(t, pool, schema); len(got) != 0 {
		t.Fatalf("after rollback: %v", got)
	}
}

// TestSchemaOption: a schema name needing quotes holds the tables; nothing
// lands in the search_path schema.
func TestSchemaOption(t *testing.T) {
	ctx := context.Background()
	pool, sp := pgtest.Schema(t)
	name := `mv "odd"; DROP TABLE x; -- ` + t.Name()
	t.Cleanup(func() {
		_, _ = pool.Exec(context.Background(), `DROP SCHEMA IF EXISTS `+pgx.Identifier{name}.Sanitize()+` CASCADE`)
	})
	s, err := pgsaver.New(pool, pgsaver.Options{Schema: name})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Setup(ctx); err != nil {
		t.Fatal(err)
	}
	cfg, err := s.Put(ctx, checkpointer.Config{ThreadID: "t"}, &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(0),
		ChannelValues: map[string]any{"a": "x"}, ChannelVersions: map[string]string{"a": "1"}}, nil, map[string]string{"a": "1"})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.PutWrites(ctx, cfg, []checkpointer.Write{{Channel: "a", Value: "y"}}, "task", ""); err != nil {
		t.Fatal(err)
	}
	tu, err := s.GetTuple(ctx, cfg)
	if err != nil || tu == nil {
		t.Fatalf("get: %v %v", tu, err)
	}
	if tu.Checkpoint.ChannelValues["a"] != "x" || len(tu.PendingWrites) != 1 {
		t.Errorf("tuple = %+v", tu)
	}
	if got := indexes(t, pool, name); !slices.Equal(got, wantIndexes) {
		t.Errorf("indexes in %q = %v", name, got)
	}
	if got := indexes(t, pool, sp); len(got) != 0 {
		t.Errorf("search_path schema got %v", got)
	}
	if _, err := pgsaver.New(pool, pgsaver.Options{Schema: "a\x00b"}); err == nil {
		t.Error("schema with NUL accepted")
	}
}

// TestSetupReplacesInvalidIndex: an index a failed CREATE INDEX
// CONCURRENTLY left invalid is rebuilt, not taken as done.
func TestSetupReplacesInvalidIndex(t *testing.T) {
	ctx := context.Background()
	pool, schema := pgtest.Schema(t)
	execFile(t, pool, "js_rows.sql") // JS stops at migration 4
	_, err := pool.Exec(ctx, `CREATE UNIQUE INDEX CONCURRENTLY checkpoints_thread_id_idx ON checkpoints(thread_id)`)
	if err == nil {
		t.Fatal("unique index over duplicate thread ids built")
	}
	valid := func() bool {
		var ok bool
		if err := pool.QueryRow(ctx, `SELECT i.indisvalid FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.relname = 'checkpoints_thread_id_idx' AND n.nspname = $1`, schema).Scan(&ok); err != nil {
			t.Fatal(err)
		}
		return ok
	}
	if valid() {
		t.Fatal("failed build left a valid index")
	}
	s, err := pgsaver.New(pool, pgsaver.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Setup(ctx); err != nil {
		t.Fatal(err)
	}
	if !valid() {
		t.Error("Setup kept the invalid index")
	}
}
