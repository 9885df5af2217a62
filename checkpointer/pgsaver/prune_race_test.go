package pgsaver_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/checkpointer/pgsaver"
)

// The interleavings of a prune (one batch: checkpointer.LatestKeeper)
// with a put that continues a checkpoint of the thread. Each test holds
// one side open in a caller's transaction and waits, by asking
// PostgreSQL, until the other side is blocked by it (or, where it must
// not be, finishes): no sleeps, no timing.

// pruneRace is a thread of three checkpoints: old (v1, whose
// ChannelTasks writes hold a send), mid and newest (v4), and "base", a
// value old wrote that every later checkpoint references.
type pruneRace struct {
	s                *pgsaver.Saver
	pool             *pgxpool.Pool
	thread           string
	old, mid, newest *checkpointer.Checkpoint
	oldCfg, newCfg   checkpointer.Config
}

func newPruneRace(t *testing.T) *pruneRace {
	t.Helper()
	ctx := context.Background()
	s, pool := newSaver(t, pgsaver.Options{})
	r := &pruneRace{s: s, pool: pool, thread: "race"}
	put := func(cfg checkpointer.Config, n, v int, prev *checkpointer.Checkpoint, vals map[string]any) (*checkpointer.Checkpoint, checkpointer.Config) {
		cp, nv := step(n, prev, vals)
		cp.V = v
		out, err := s.Put(ctx, cfg, cp, nil, nv)
		if err != nil {
			t.Fatal(err)
		}
		return cp, out
	}
	r.old, r.oldCfg = put(checkpointer.Config{ThreadID: r.thread}, 1, 1, nil, map[string]any{"base": "base value", "a": 1})
	if err := s.PutWrites(ctx, r.oldCfg, []checkpointer.Write{{Channel: checkpointer.ChannelTasks, Value: "send-1"}}, "task-1", ""); err != nil {
		t.Fatal(err)
	}
	var midCfg checkpointer.Config
	r.mid, midCfg = put(r.oldCfg, 2, 4, r.old, map[string]any{"a": 2})
	r.newest, r.newCfg = put(midCfg, 3, 4, r.mid, map[string]any{"a": 3})
	return r
}

// child is a checkpoint continuing parent, format v: it inherits "base"
// (so its put needs the parent) and writes "a".
func (r *pruneRace) child(parent *checkpointer.Checkpoint, v int) (*checkpointer.Checkpoint, map[string]string) {
	cp, nv := step(9, parent, map[string]any{"a": 9})
	cp.V = v
	return cp, nv
}

// begin opens a caller's transaction and returns it, a saver bound to it
// and its backend's pid.
func (r *pruneRace) begin(t *testing.T) (pgx.Tx, *pgsaver.Saver, int) {
	t.Helper()
	ctx := context.Background()
	tx, err := r.pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tx.Rollback(context.Background()) })
	s, err := pgsaver.New(tx, pgsaver.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var pid int
	if err := tx.QueryRow(ctx, `SELECT pg_backend_pid()`).Scan(&pid); err != nil {
		t.Fatal(err)
	}
	return tx, s, pid
}

// blockedBy reports whether a session waits for a lock the session pid
// holds.
func (r *pruneRace) blockedBy(t *testing.T, pid int) bool {
	t.Helper()
	var b bool
	if err := r.pool.QueryRow(context.Background(),
		`SELECT EXISTS (SELECT 1 FROM pg_stat_activity a WHERE $1::int = ANY(pg_blocking_pids(a.pid)))`, pid).Scan(&b); err != nil {
		t.Fatal(err)
	}
	return b
}

// waitBlocked waits until done reports or a session is blocked by pid;
// it reports whether one was.
func (r *pruneRace) waitBlocked(t *testing.T, pid int, done <-chan error) (blocked bool, err error) {
	t.Helper()
	for {
		select {
		case err := <-done:
			return false, err
		default:
		}
		if r.blockedBy(t, pid) {
			return true, nil
		}
	}
}

func (r *pruneRace) ids(t *testing.T) []string {
	t.Helper()
	var out []string
	for tup, err := range r.s.List(context.Background(), &checkpointer.Config{ThreadID: r.thread}, checkpointer.ListOptions{}) {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, tup.Config.CheckpointID)
	}
	return out
}

// TestPruneKeepsV1PutCommittedDuringLock: a v1 put continuing the old
// checkpoint holds it when a prune begins; the prune waits, the put
// commits. The old and middle checkpoints go, the newest stays (it was
// the newest when the prune began), and the new v1 checkpoint stays with
// what it reads: "base" (a value of the removed old checkpoint) and its
// pending sends, the old checkpoint's ChannelTasks writes. Removing the
// writes in the statement that waited (whose snapshot predates the put)
// lost the sends.
func TestPruneKeepsV1PutCommittedDuringLock(t *testing.T) {
	ctx := context.Background()
	r := newPruneRace(t)
	tx, st, pid := r.begin(t)
	y, nv := r.child(r.old, 1)
	if _, err := st.Put(ctx, r.oldCfg, y, nil, nv); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- r.s.Prune(ctx, []string{r.thread}, checkpointer.PruneKeepLatest) }()
	if blocked, err := r.waitBlocked(t, pid, done); !blocked {
		t.Fatalf("the prune did not wait for the put continuing the checkpoint it removes (Prune = %v)", err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got, want := r.ids(t), []string{y.ID, r.newest.ID}; !slices.Equal(got, want) {
		t.Fatalf("checkpoints after the prune = %q, want %q (the put's, the newest)", got, want)
	}
	got, err := r.s.GetTuple(ctx, checkpointer.Config{ThreadID: r.thread, CheckpointID: y.ID})
	if err != nil {
		t.Fatal(err)
	}
	vals := got.Checkpoint.ChannelValues
	if vals["base"] != "base value" || !slices.Equal(asSlice(vals[checkpointer.ChannelTasks]), []any{"send-1"}) {
		t.Fatalf("the v1 checkpoint put during the prune reads base = %v, pending sends = %v; want \"base value\", [send-1]",
			vals["base"], vals[checkpointer.ChannelTasks])
	}
}

func asSlice(v any) []any {
	s, _ := v.([]any)
	return s
}

// TestPutAfterPruneLockFindsParentGone: a prune holds the checkpoints it
// removes (in a caller's transaction, not committed yet); a put
// continuing one of them waits, then fails with ErrParentMissing and
// stores nothing, not even its value rows.
func TestPutAfterPruneLockFindsParentGone(t *testing.T) {
	ctx := context.Background()
	r := newPruneRace(t)
	tx, st, pid := r.begin(t)
	if err := st.Prune(ctx, []string{r.thread}, checkpointer.PruneKeepLatest); err != nil {
		t.Fatal(err)
	}
	y, nv := r.child(r.old, 4)
	done := make(chan error, 1)
	go func() { _, err := r.s.Put(ctx, r.oldCfg, y, nil, nv); done <- err }()
	if blocked, err := r.waitBlocked(t, pid, done); !blocked {
		t.Fatalf("a put continuing a checkpoint the prune removes did not wait for it (Put = %v)", err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-done; !errors.Is(err, checkpointer.ErrParentMissing) {
		t.Fatalf("Put = %v, want ErrParentMissing", err)
	}
	if got, want := r.ids(t), []string{r.newest.ID}; !slices.Equal(got, want) {
		t.Fatalf("checkpoints = %q, want %q", got, want)
	}
	if n := count(t, r.pool, `SELECT count(*) FROM checkpoint_blobs WHERE version = '9'`); n != 0 {
		t.Fatalf("%d value rows of the refused put are stored", n)
	}
}

// TestPutContinuingNewestDuringPrune: a put continuing the newest
// checkpoint while a prune holds its locks (uncommitted) does not wait
// for it, and after both commit the new checkpoint reads every value,
// "base" included (written by a removed checkpoint, referenced by the
// newest).
func TestPutContinuingNewestDuringPrune(t *testing.T) {
	ctx := context.Background()
	r := newPruneRace(t)
	tx, st, pid := r.begin(t)
	if err := st.Prune(ctx, []string{r.thread}, checkpointer.PruneKeepLatest); err != nil {
		t.Fatal(err)
	}
	y, nv := r.child(r.newest, 4)
	done := make(chan error, 1)
	go func() { _, err := r.s.Put(ctx, r.newCfg, y, nil, nv); done <- err }()
	if blocked, err := r.waitBlocked(t, pid, done); blocked {
		t.Fatal("a put continuing the newest checkpoint waits for the prune")
	} else if err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if got, want := r.ids(t), []string{y.ID, r.newest.ID}; !slices.Equal(got, want) {
		t.Fatalf("checkpoints = %q, want %q", got, want)
	}
	got, err := r.s.GetTuple(ctx, checkpointer.Config{ThreadID: r.thread})
	if err != nil {
		t.Fatal(err)
	}
	if vals := got.Checkpoint.ChannelValues; vals["base"] != "base value" || fmt.Sprint(vals["a"]) != "9" {
		t.Fatalf("the put continuing the newest reads %v, want base and a = 9", vals)
	}
}
