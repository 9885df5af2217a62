package vault

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/checkpointer/pgsaver"
	"github.com/memvault/memvault/config"
	"github.com/memvault/memvault/keys"
	"github.com/memvault/memvault/keys/pgkeys"
	"github.com/memvault/memvault/memvaulttest/pgtest"
	"github.com/memvault/memvault/store"
	"github.com/memvault/memvault/store/pgstore"
)

// carolThenCopy is guardConfigsOn after carol:1 was written on the live
// table and the copy made: the state every copied-key-table test starts
// from.
func carolThenCopy(t *testing.T, pg, apart, citus bool) (live, onCopy config.Config) {
	t.Helper()
	ctx := context.Background()
	live, onCopy, makeCopy := guardConfigsOn(t, pg, apart, citus)
	h, err := Open(ctx, live)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := putCarolS22(ctx, h, "carol:1", "carol takes insulin"); err != nil {
		t.Fatal(err)
	}
	h.Close()
	makeCopy()
	return live, onCopy
}

// guardConfigsOn returns s23Config's database (SQLite, or a PostgreSQL
// schema with the key table in a schema of its own) and a configuration of
// the same database on a copy of its key table, and a function that makes
// the copy: a copy of the key file, or every row of the key schema copied
// into another schema of the same database (MEMVAULT_KEY_TABLE pointed at
// a copy). The copy keeps the table's id, so the pin accepts it.
//
// With apart, the process on the copy reaches it through a DSN of its own
// (MEMVAULT_KEY_DSN: a key table apart from the data, whose writes check
// their keys in Go inside their transaction and run the guard statement
// there). With citus, the database is a Citus coordinator's.
func guardConfigsOn(t *testing.T, pg, apart, citus bool) (live, onCopy config.Config, makeCopy func()) {
	t.Helper()
	dir := t.TempDir()
	live = s23Config(dir)
	onCopy = live
	if !pg {
		onCopy.KeyTable = filepath.Join(dir, "copied-keys.db")
		return live, onCopy, func() { copyFileS22(t, live.DBPath+".keys", onCopy.KeyTable) }
	}
	if live.DSN = pgtest.SchemaDSN(t); citus {
		live.DSN = pgtest.CitusSchemaDSN(t)
	}
	suffix := time.Now().UnixNano()
	live.KeyTable = fmt.Sprintf("keys_%d", suffix)
	onCopy = live
	onCopy.KeyTable = fmt.Sprintf("keys_copy_%d", suffix)
	if apart {
		onCopy.KeyDSN = pgtest.SchemaDSN(t)
	}
	return live, onCopy, func() {
		ctx := context.Background()
		pool, err := pgxpool.New(ctx, live.DSN)
		if err != nil {
			t.Fatal(err)
		}
		defer pool.Close()
		tb, err := pgkeys.New(pool, pgkeys.Options{Schema: onCopy.KeyTable})
		if err != nil {
			t.Fatal(err)
		}
		if err := tb.Setup(ctx); err != nil {
			t.Fatal(err)
		}
		rows, err := pool.Query(ctx, `SELECT table_name FROM information_schema.tables WHERE table_schema = $1 AND table_type = 'BASE TABLE'`, live.KeyTable)
		if err != nil {
			t.Fatal(err)
		}
		names, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil || len(names) == 0 {
			t.Fatalf("key schema %s: tables %v, %v", live.KeyTable, names, err)
		}
		for _, tbl := range names {
			src, dst := pgx.Identifier{live.KeyTable, tbl}.Sanitize(), pgx.Identifier{onCopy.KeyTable, tbl}.Sanitize()
			if _, err := pool.Exec(ctx, `DELETE FROM `+dst+`; INSERT INTO `+dst+` SELECT * FROM `+src); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// carolWrites are the writes of carol's values a process can make: a
// checkpoint, pending writes, a store item.
func carolWrites(ctx context.Context, h *Handle, n int) map[string]error {
	thread := fmt.Sprintf("carol:%d", n)
	_, put := putCarolS22(ctx, h, thread, "carol takes insulin")
	writes := h.Saver.PutWrites(ctx, checkpointer.Config{ThreadID: thread, CheckpointID: checkpointer.NewID(0)},
		[]checkpointer.Write{{Channel: "notes", Value: "carol takes insulin"}}, "task-1", "")
	item := h.Store.Put(ctx, store.Namespace{"users", "carol"}, fmt.Sprint("k", n), map[string]any{"v": "no peanuts"})
	return map[string]error{"put": put, "put_writes": writes, "store put": item}
}

// TestRunningProcessOnCopiedKeyTable (the session 23 review's
// TestReviewS23RunningProcessOnCopiedKeyTable, on SQLite and PostgreSQL,
// for checkpoints, pending writes and store items): a process already
// running on a copy of the key table when another process, on the table
// the erasures run on, forgets carol keeps carol's keys in its copy. The
// data database records the erasure (erased_subject:carol), which every
// write of carol checks in its own transaction against the count of
// erasures of the writer's key table: the copy's is behind, and the write
// is refused. On main each write succeeded, sealed under carol's key that
// only the copy holds ("a process running on a copy of the key table wrote
// carol:2 after Forget(carol) returned"). A process on the live table is
// refused nothing: other subjects, and carol once readmitted.
func TestRunningProcessOnCopiedKeyTable(t *testing.T) {
	for _, tc := range []struct {
		name      string
		pg, apart bool
		citus     bool
	}{{"SQLite", false, false, false}, {"PostgreSQL", true, false, false}, {"PostgreSQLKeyDSN", true, true, false}, {"Citus", true, false, true}} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			live, onCopy := carolThenCopy(t, tc.pg, tc.apart, tc.citus)

			stale, err := Open(ctx, onCopy) // running before the erasure
			if err != nil {
				t.Fatal(err)
			}
			defer stale.Close()
			other, err := Open(ctx, live) // on the live table, running too
			if err != nil {
				t.Fatal(err)
			}
			defer other.Close()
			if _, err := putCarolS22(ctx, other, "dave:1", "dave is fine"); err != nil {
				t.Fatal(err)
			}

			h, err := Open(ctx, live)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := h.Forget(ctx, "carol"); err != nil {
				t.Fatal(err)
			}
			h.Close()

			for op, err := range carolWrites(ctx, stale, 2) {
				if !errors.Is(err, keys.ErrSubjectErased) {
					t.Errorf("a process running on a copy of the key table, %s of carol after Forget(carol) returned: %v, want keys.ErrSubjectErased", op, err)
				}
			}
			if _, err := putCarolS22(ctx, stale, "dave:2", "dave is fine"); err != nil {
				t.Errorf("the process on the copy, a put of another subject: %v", err)
			}
			if _, err := putCarolS22(ctx, other, "dave:3", "dave is fine"); err != nil {
				t.Errorf("a process on the live table, a put of another subject after carol's erasure: %v", err)
			}
			if err := other.Readmit(ctx, "carol"); err != nil {
				t.Fatal(err)
			}
			for op, err := range carolWrites(ctx, other, 3) {
				if err != nil {
					t.Errorf("a process on the live table opened before the erasure, %s of carol once readmitted: %v", op, err)
				}
			}
			for op, err := range carolWrites(ctx, stale, 4) {
				if !errors.Is(err, keys.ErrSubjectErased) {
					t.Errorf("the process on the copy, %s of carol once readmitted: %v, want keys.ErrSubjectErased (its keys are the erased ones)", op, err)
				}
			}
		})
	}
}

// TestErasureWaitsForGuardedWrite (PostgreSQL, READ COMMITTED): a write
// of carol by a process on a copy of the key table that checked the
// erasure guard before Forget(carol) recorded the erasure — its
// transaction still open (the caller's, through PutTx) — must be finished
// before Forget deletes carol's rows: Forget waits for it (the guard holds
// carol's erasure lock shared until the transaction ends; MarkErasure
// takes it), and then deletes what it wrote. On main Forget did not wait:
// the transaction committed after Forget returned, and carol:2's rows
// stayed, sealed under the key only the copy holds.
func TestErasureWaitsForGuardedWrite(t *testing.T) {
	t.Run("SameDatabase", func(t *testing.T) { testErasureWaitsForGuardedWrite(t, false, false) })
	t.Run("KeyDSN", func(t *testing.T) { testErasureWaitsForGuardedWrite(t, true, false) })
	t.Run("Citus", func(t *testing.T) { testErasureWaitsForGuardedWrite(t, false, true) })
}

func testErasureWaitsForGuardedWrite(t *testing.T, apart, citus bool) {
	ctx := context.Background()
	live, onCopy := carolThenCopy(t, true, apart, citus)
	stale, err := Open(ctx, onCopy)
	if err != nil {
		t.Fatal(err)
	}
	defer stale.Close()
	// The eraser's sessions are told apart by their application_name.
	eraserCfg := live
	var eraserApp string
	eraserCfg.DSN, eraserApp = appDSN(t, live.DSN)
	eraser, err := Open(ctx, eraserCfg)
	if err != nil {
		t.Fatal(err)
	}
	defer eraser.Close()

	tx, err := stale.Pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	saver, ok := stale.Saver.(*pgsaver.Saver)
	if !ok {
		t.Fatalf("saver %T", stale.Saver)
	}
	st, ok := stale.Store.(*pgstore.Store)
	if !ok {
		t.Fatalf("store %T", stale.Store)
	}
	cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(0), ChannelValues: map[string]any{"notes": "carol takes insulin"},
		ChannelVersions: map[string]string{"notes": saver.NextVersion("")}}
	if _, err := saver.PutTx(ctx, tx, checkpointer.Config{ThreadID: "carol:2"}, cp, nil, cp.ChannelVersions); err != nil {
		t.Fatal(err)
	}
	if err := st.PutTx(ctx, tx, store.Namespace{"users", "carol"}, "k2", map[string]any{"v": "no peanuts"}); err != nil {
		t.Fatal(err)
	}

	done := make(chan error, 1)
	go func() {
		// Not waiting for the key table's purge (which, on main, waited
		// for the write's snapshot instead): what counts here is which
		// rows it deleted.
		_, err := eraser.ForgetWith(ctx, "carol", ForgetOptions{Wait: -1})
		done <- err
	}()
	// Forget must be waiting for the write's transaction: a session of
	// the eraser waiting for carol's erasure lock (in this database),
	// which the write's session holds. Any other wait, or another
	// session's (another test binary's on a shared server, where the
	// lock of a subject of the same name is the same lock), does not
	// count. A Forget that does not wait returns first: the commit below
	// then comes after it, and the rows it left fail the test.
	var writer int32
	if err := tx.QueryRow(ctx, `SELECT pg_backend_pid()`).Scan(&writer); err != nil {
		t.Fatal(err)
	}
	awaitAdvisoryWait(t, ctx, eraser.Pool, "memvault_erasure/carol", eraserApp, writer, done)
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil && !errors.Is(err, keys.ErrErasurePending) {
		t.Fatal(err)
	}
	var threads, items int
	if err := eraser.Pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM checkpoints WHERE thread_id = 'carol:2'), (SELECT count(*) FROM store WHERE prefix = 'users.carol')`).Scan(&threads, &items); err != nil {
		t.Fatal(err)
	}
	if threads != 0 || items != 0 {
		t.Fatalf("after Forget(carol) returned, carol's rows written by a process on a copy of the key table, its guard read before the erasure: %d checkpoints of carol:2, %d items of (users, carol); want none (Forget waits for the write and deletes them)", threads, items)
	}
}

// guardChildEnv, when set, makes TestGuardChildProcess the process on the
// copy of the key table for TestCopiedKeyTableTwoProcesses: its value is
// the configuration, as JSON.
const guardChildEnv = "MEMVAULT_TEST_GUARD_CHILD"

// guardChildSpec is what of s23Config the child changes.
type guardChildSpec struct{ DBPath, DSN, KeyTable, KeyDSN string }

// TestGuardChildProcess is not a test: TestCopiedKeyTableTwoProcesses runs
// the test binary again with it selected. It opens the database on the
// copy of the key table, says "ready", waits for a line on stdin (the
// other process's Forget returned), tries carol's writes and prints each
// result.
func TestGuardChildProcess(t *testing.T) {
	spec := os.Getenv(guardChildEnv)
	if spec == "" {
		t.Skip("the process on a copy of the key table, for TestCopiedKeyTableTwoProcesses")
	}
	var w guardChildSpec
	if err := json.Unmarshal([]byte(spec), &w); err != nil {
		t.Fatal(err)
	}
	c := s23Config(t.TempDir())
	c.DBPath, c.DSN, c.KeyTable, c.KeyDSN = w.DBPath, w.DSN, w.KeyTable, w.KeyDSN
	ctx := context.Background()
	h, err := Open(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	fmt.Println("ready")
	if _, err := bufio.NewReader(os.Stdin).ReadString('\n'); err != nil {
		t.Fatal(err)
	}
	results := carolWrites(ctx, h, 2)
	for _, op := range slices.Sorted(maps.Keys(results)) {
		fmt.Printf("%s: erased=%v %v\n", op, errors.Is(results[op], keys.ErrSubjectErased), results[op])
	}
}

// TestCopiedKeyTableTwoProcesses is TestRunningProcessOnCopiedKeyTable
// with the process on the copy a process of its own (SQLite: its own
// connections and file locks). On main the child's writes succeeded:
// "put: erased=false <nil>".
func TestCopiedKeyTableTwoProcesses(t *testing.T) {
	for _, pg := range []bool{false, true} {
		t.Run(map[bool]string{false: "SQLite", true: "PostgreSQL"}[pg], func(t *testing.T) {
			ctx := context.Background()
			live, onCopy := carolThenCopy(t, pg, false, false)

			b, err := json.Marshal(guardChildSpec{onCopy.DBPath, onCopy.DSN, onCopy.KeyTable, onCopy.KeyDSN})
			if err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(os.Args[0], "-test.run=^TestGuardChildProcess$", "-test.v")
			cmd.Env = append(os.Environ(), guardChildEnv+"="+string(b))
			stdin, err := cmd.StdinPipe()
			if err != nil {
				t.Fatal(err)
			}
			stdout, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			cmd.Stderr = os.Stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer cmd.Process.Kill()
			out := bufio.NewScanner(stdout)
			var before []string
			for out.Scan() && out.Text() != "ready" {
				before = append(before, out.Text())
			}
			if out.Text() != "ready" {
				t.Fatalf("the child did not open the database: %v %q", out.Err(), before)
			}

			h, err := Open(ctx, live)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := h.Forget(ctx, "carol"); err != nil {
				t.Fatal(err)
			}
			h.Close()
			if _, err := io.WriteString(stdin, "go\n"); err != nil {
				t.Fatal(err)
			}
			var lines []string
			for out.Scan() {
				if op, rest, ok := strings.Cut(out.Text(), ": erased="); ok && slices.Contains([]string{"put", "put_writes", "store put"}, op) {
					lines = append(lines, out.Text())
					if !strings.HasPrefix(rest, "true") {
						t.Errorf("the process running on a copy of the key table, after Forget(carol) returned in another process: %s", out.Text())
					}
				}
			}
			if err := cmd.Wait(); err != nil {
				t.Fatalf("child: %v", err)
			}
			if len(lines) != 3 {
				t.Fatalf("the child reported %q, want its three writes", lines)
			}
		})
	}
}
