package pgsaver_test

import (
	"context"
	"fmt"
	"maps"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/checkpointer/checkpointertest"
	"github.com/memvault/memvault/checkpointer/pgsaver"
)

// TestRemoverWaitsForResumedPut: a put continuing a checkpoint commits
// while a sweep, Prune, DeleteThread, DeleteCheckpoint or DeleteForRuns
// that would remove that checkpoint is running. The put is held open in
// a transaction (PutTx) until the remover is blocked on it, which is the
// agent's put landing in the middle of the sweep's statement: under READ
// COMMITTED the remover's snapshot predates the put's commit. Afterwards
// the new checkpoint must read every value it references, or be gone
// whole (DeleteThread, DeleteForRuns): never be kept without the values
// it shares with its parent.
func TestRemoverWaitsForResumedPut(t *testing.T) {
	ctx := t.Context()
	aged := func(h int, i int) string {
		return checkpointer.IDFloor(time.Now().Add(-time.Duration(h) * time.Hour))[:19] + fmt.Sprintf("8000-%012d", i)
	}
	for _, c := range []struct {
		name string
		// from is the index of the checkpoint (of three) the put
		// continues; old makes the thread idle for a day.
		from int
		old  bool
		// remove runs the remover; gone says the new checkpoint may be
		// deleted with it.
		remove func(ctx context.Context, s *pgsaver.Saver, thread string, ids []string) error
		gone   bool
	}{
		{"sweep_idle", 2, true, func(ctx context.Context, s *pgsaver.Saver, _ string, _ []string) error {
			_, err := s.Sweep(ctx, checkpointer.RetentionPolicy{IdleTTL: 24 * time.Hour}, checkpointer.SweepOptions{})
			return err
		}, false},
		{"sweep_keep_latest_fork", 0, false, func(ctx context.Context, s *pgsaver.Saver, _ string, _ []string) error {
			_, err := s.Sweep(ctx, checkpointer.RetentionPolicy{KeepLatest: 1}, checkpointer.SweepOptions{})
			return err
		}, false},
		{"prune_fork", 0, false, func(ctx context.Context, s *pgsaver.Saver, thread string, _ []string) error {
			return s.Prune(ctx, []string{thread}, checkpointer.PruneKeepLatest)
		}, false},
		{"delete_checkpoint", 1, false, func(ctx context.Context, s *pgsaver.Saver, thread string, ids []string) error {
			return s.DeleteCheckpoint(ctx, checkpointer.Config{ThreadID: thread, CheckpointID: ids[1]})
		}, false},
		{"delete_thread", 2, false, func(ctx context.Context, s *pgsaver.Saver, thread string, _ []string) error {
			return s.DeleteThread(ctx, thread)
		}, true},
		{"delete_for_runs", 2, false, func(ctx context.Context, s *pgsaver.Saver, _ string, _ []string) error {
			return s.DeleteForRuns(ctx, []string{"run-1"})
		}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, pool := newSaver(t, pgsaver.Options{})
			thread := "resumed-" + c.name
			// Three checkpoints: "counter" written by each, "base" by the
			// first two: each version of the first two checkpoints is
			// theirs alone but base@2.
			var ids []string
			cfg := checkpointer.Config{ThreadID: thread}
			versions, values := map[string]string{}, map[string]any{}
			for i := range 3 {
				nv := map[string]string{"counter": s.NextVersion(versions["counter"])}
				values["counter"] = int64(i)
				if i < 2 {
					nv["base"], values["base"] = s.NextVersion(versions["base"]), fmt.Sprintf("base %d", i)
				}
				maps.Copy(versions, nv)
				id := checkpointer.NewID(i)
				if c.old {
					id = aged(48-i, i)
				}
				cp := &checkpointer.Checkpoint{V: 4, ID: id, TS: time.Now().UTC(), ChannelValues: maps.Clone(values), ChannelVersions: maps.Clone(versions)}
				var err error
				if cfg, err = s.Put(ctx, cfg, cp, checkpointer.Metadata{"run_id": "run-1"}, nv); err != nil {
					t.Fatal(err)
				}
				ids = append(ids, id)
			}
			from, err := s.GetTuple(ctx, checkpointer.Config{ThreadID: thread, CheckpointID: ids[c.from]})
			if err != nil || from == nil {
				t.Fatalf("GetTuple: %v %v", from, err)
			}
			next := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(3), TS: time.Now().UTC(),
				ChannelValues: maps.Clone(from.Checkpoint.ChannelValues), ChannelVersions: maps.Clone(from.Checkpoint.ChannelVersions)}
			// The put inherits every value of its parent and adds a note.
			nv := map[string]string{"note": s.NextVersion("")}
			maps.Copy(next.ChannelVersions, nv)
			next.ChannelValues["note"] = "resumed"

			tx, err := pool.Begin(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer tx.Rollback(context.WithoutCancel(ctx)) //nolint:errcheck // after Commit a no-op
			var pid int32
			if err := tx.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&pid); err != nil {
				t.Fatal(err)
			}
			if _, err := s.PutTx(ctx, tx, from.Config, next, checkpointer.Metadata{"run_id": "run-2"}, nv); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- c.remove(ctx, s, thread, ids) }()
			// Commit once the remover waits for the put's transaction.
			waitBlockedBy(t, pool, pid, done)
			if err := tx.Commit(ctx); err != nil {
				t.Fatal(err)
			}
			if err := <-done; err != nil {
				t.Fatalf("remover: %v", err)
			}
			got, err := s.GetTuple(ctx, checkpointer.Config{ThreadID: thread, CheckpointID: next.ID})
			if err != nil {
				t.Fatal(err)
			}
			if got == nil {
				if !c.gone {
					t.Fatalf("the resumed checkpoint %s is gone", next.ID)
				}
				return
			}
			if !checkpointertest.Equal(next.ChannelValues, got.Checkpoint.ChannelValues) {
				t.Fatalf("the resumed checkpoint reads %v, want %v: values it shares with its parent were removed",
					got.Checkpoint.ChannelValues, next.ChannelValues)
			}
		})
	}
}

// waitBlockedBy returns once some session waits for a lock held by the
// backend pid (pg_blocking_pids); it fails if done reports first.
func waitBlockedBy(t *testing.T, pool interface {
	QueryRow(context.Context, string, ...any) pgx.Row
}, pid int32, done chan error) {
	t.Helper()
	for {
		select {
		case err := <-done:
			t.Fatalf("the remover returned (%v) without waiting for the put's transaction", err)
		default:
		}
		var n int
		if err := pool.QueryRow(t.Context(), "SELECT count(*) FROM pg_stat_activity WHERE $1::int = ANY(pg_blocking_pids(pid))", pid).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n > 0 {
			return
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// TestRemoverSparesPutsCommittedWhileItWaits: a remover's lock statement
// waits for a put held open (PutTx) while another run stores a checkpoint
// P in the thread, which its lock statement's snapshot does not see, and
// a third put, also held open, continues P. Once the first put commits,
// the remover must not delete P's values from under the put continuing
// it: that checkpoint, when it commits, reads every value. On the code
// that deleted by run id (DeleteForRuns) or every row of the thread
// (DeleteThread) after locking, without having locked P, the remover
// deleted P, waited for the put continuing P, and removed the values that
// put shares with P: DeleteForRuns left it the note alone, DeleteThread
// left it no value at all.
func TestRemoverSparesPutsCommittedWhileItWaits(t *testing.T) {
	ctx := t.Context()
	for _, c := range []struct {
		name   string
		remove func(ctx context.Context, s *pgsaver.Saver, thread string) error
	}{
		{"delete_for_runs", func(ctx context.Context, s *pgsaver.Saver, _ string) error {
			return s.DeleteForRuns(ctx, []string{"run-1"})
		}},
		{"delete_thread", func(ctx context.Context, s *pgsaver.Saver, thread string) error {
			return s.DeleteThread(ctx, thread)
		}},
		{"prune_delete", func(ctx context.Context, s *pgsaver.Saver, thread string) error {
			return s.Prune(ctx, []string{thread}, checkpointer.PruneDelete)
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, pool := newSaver(t, pgsaver.Options{})
			thread := "waits-" + c.name
			put := func(cfg checkpointer.Config, prev *checkpointer.Checkpoint, run string, vals map[string]any) (*checkpointer.Checkpoint, checkpointer.Config) {
				t.Helper()
				cp, nv := next(s, prev, vals)
				cfg, err := s.Put(ctx, cfg, cp, checkpointer.Metadata{"run_id": run}, nv)
				if err != nil {
					t.Fatal(err)
				}
				return cp, cfg
			}
			// putOpen puts in a transaction it leaves open and returns
			// it, with its backend's pid.
			putOpen := func(cfg checkpointer.Config, cp *checkpointer.Checkpoint, nv map[string]string) (pgx.Tx, int32) {
				t.Helper()
				tx, err := pool.Begin(ctx)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { _ = tx.Rollback(context.Background()) })
				var pid int32
				if err := tx.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&pid); err != nil {
					t.Fatal(err)
				}
				if _, err := s.PutTx(ctx, tx, cfg, cp, checkpointer.Metadata{"run_id": "run-2"}, nv); err != nil {
					t.Fatal(err)
				}
				return tx, pid
			}
			c0, cfg := put(checkpointer.Config{ThreadID: thread}, nil, "run-1", map[string]any{"base": "b0", "counter": int64(0)})
			c1, cfg := put(cfg, c0, "run-1", map[string]any{"counter": int64(1)})
			// x continues c1 and holds it: the remover waits for x.
			x, nv := next(s, c1, map[string]any{"note": "x"})
			tx1, pid1 := putOpen(cfg, x, nv)
			done := make(chan error, 1)
			go func() { done <- c.remove(ctx, s, thread) }()
			waitBlockedBy(t, pool, pid1, done)
			// Meanwhile run-1 starts the thread again (P, no parent)…
			p, pcfg := put(checkpointer.Config{ThreadID: thread}, nil, "run-1", map[string]any{"base": "p", "counter": int64(10)})
			// …and another agent continues P, inheriting both its values.
			n2, nv := next(s, p, map[string]any{"note": "n2"})
			tx2, pid2 := putOpen(pcfg, n2, nv)
			if err := tx1.Commit(ctx); err != nil {
				t.Fatal(err)
			}
			// The remover either finishes (it leaves P alone) or waits
			// for the put continuing P (it deletes P).
			finished := waitBlockedOrDone(t, pool, pid2, done)
			if err := tx2.Commit(ctx); err != nil {
				t.Fatal(err)
			}
			if err := finished(); err != nil {
				t.Fatalf("remover: %v", err)
			}
			got, err := s.GetTuple(ctx, checkpointer.Config{ThreadID: thread, CheckpointID: n2.ID})
			if err != nil {
				t.Fatal(err)
			}
			if got == nil {
				t.Fatalf("checkpoint %s, committed after the remover's statements began, is gone", n2.ID)
			}
			if !checkpointertest.Equal(n2.ChannelValues, got.Checkpoint.ChannelValues) {
				t.Fatalf("checkpoint %s reads %v, want %v: the remover deleted values it shares with its parent",
					n2.ID, got.Checkpoint.ChannelValues, n2.ChannelValues)
			}
			// Every checkpoint left reads every value it names.
			for tp, err := range s.List(ctx, &checkpointer.Config{ThreadID: thread}, checkpointer.ListOptions{}) {
				if err != nil {
					t.Fatal(err)
				}
				for ch := range tp.Checkpoint.ChannelVersions {
					if _, ok := tp.Checkpoint.ChannelValues[ch]; !ok {
						t.Errorf("checkpoint %s lacks channel %q", tp.Checkpoint.ID, ch)
					}
				}
			}
		})
	}
}

// next returns the checkpoint after prev (nil: a first one) that writes
// vals, each at its next version, and inherits prev's other channels.
func next(s *pgsaver.Saver, prev *checkpointer.Checkpoint, vals map[string]any) (*checkpointer.Checkpoint, map[string]string) {
	cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(0), TS: time.Now().UTC(),
		ChannelValues: map[string]any{}, ChannelVersions: map[string]string{}}
	if prev != nil {
		cp.ChannelValues, cp.ChannelVersions = maps.Clone(prev.ChannelValues), maps.Clone(prev.ChannelVersions)
	}
	nv := map[string]string{}
	for ch, v := range vals {
		nv[ch] = s.NextVersion(cp.ChannelVersions[ch])
		cp.ChannelValues[ch], cp.ChannelVersions[ch] = v, nv[ch]
	}
	return cp, nv
}

// waitBlockedOrDone waits until some session waits for a lock held by
// the backend pid, or done reports; it returns what then gives done's
// error.
func waitBlockedOrDone(t *testing.T, pool interface {
	QueryRow(context.Context, string, ...any) pgx.Row
}, pid int32, done chan error) func() error {
	t.Helper()
	for {
		select {
		case err := <-done:
			return func() error { return err }
		default:
		}
		var n int
		if err := pool.QueryRow(t.Context(), "SELECT count(*) FROM pg_stat_activity WHERE $1::int = ANY(pg_blocking_pids(pid))", pid).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n > 0 {
			return func() error { return <-done }
		}
		time.Sleep(2 * time.Millisecond)
	}
}
