package postgres_test

import (
	"context"
	"fmt"
	"maps"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/checkpointer/checkpointertest"
	"github.com/memvault/memvault/checkpointer/postgres"
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
		remove func(ctx context.Context, s *postgres.Saver, thread string, ids []string) error
		gone   bool
	}{
		{"sweep_idle", 2, true, func(ctx context.Context, s *postgres.Saver, _ string, _ []string) error {
			_, err := s.Sweep(ctx, checkpointer.RetentionPolicy{IdleTTL: 24 * time.Hour}, checkpointer.SweepOptions{})
			return err
		}, false},
		{"sweep_keep_latest_fork", 0, false, func(ctx context.Context, s *postgres.Saver, _ string, _ []string) error {
			_, err := s.Sweep(ctx, checkpointer.RetentionPolicy{KeepLatest: 1}, checkpointer.SweepOptions{})
			return err
		}, false},
		{"prune_fork", 0, false, func(ctx context.Context, s *postgres.Saver, thread string, _ []string) error {
			return s.Prune(ctx, []string{thread}, checkpointer.PruneKeepLatest)
		}, false},
		{"delete_checkpoint", 1, false, func(ctx context.Context, s *postgres.Saver, thread string, ids []string) error {
			return s.DeleteCheckpoint(ctx, checkpointer.Config{ThreadID: thread, CheckpointID: ids[1]})
		}, false},
		{"delete_thread", 2, false, func(ctx context.Context, s *postgres.Saver, thread string, _ []string) error {
			return s.DeleteThread(ctx, thread)
		}, true},
		{"delete_for_runs", 2, false, func(ctx context.Context, s *postgres.Saver, _ string, _ []string) error {
			return s.DeleteForRuns(ctx, []string{"run-1"})
		}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, pool := newSaver(t, postgres.Options{})
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
