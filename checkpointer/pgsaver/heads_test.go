package pgsaver_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/checkpointer/pgsaver"
	"github.com/memvault/memvault/memvaulttest/pgtest"
)

// heads returns the statements of log since the last call that read a
// removal's heads (the engine's decision input), and forgets them all.
func heads(log *pgtest.StatementLog) []string {
	var out []string
	for _, s := range log.Take() {
		if strings.HasPrefix(s, "SELECT thread_id, checkpoint_ns, checkpoint_id, true,") {
			out = append(out, s)
		}
	}
	return out
}

// TestRemovalsReadHeadsTwice: a prune reads no heads (the driver runs it
// whole: checkpointer.LatestKeeper). Any other removal with something to
// remove reads the heads of its threads twice — once to pick what to lock, once after
// the lock — and not a third time in its transaction before the lock,
// which would see nothing more (READ COMMITTED) and cost another pass over
// every checkpoint of the threads. A sweep without IdleTTL does not look
// for orphan write sets, which costs a pass over the writes: only an idle
// thread's go. Where the rule removes them, only the first read looks for
// them: the second keeps the first's (only locked rows go, and a write
// set has no row to lock).
func TestRemovalsReadHeadsTwice(t *testing.T) {
	ctx := context.Background()
	cfg := pgtest.Pool(t).Config()
	var log pgtest.StatementLog
	cfg.ConnConfig.Tracer = &log
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	s, err := pgsaver.New(pool, pgsaver.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Setup(ctx); err != nil {
		t.Fatal(err)
	}
	chain := func(thread string, n int) {
		t.Helper()
		var last checkpointer.Config
		last.ThreadID = thread
		var cp *checkpointer.Checkpoint
		for i := range n {
			var nv map[string]string
			cp, nv = step(i+1, cp, map[string]any{"a": i})
			cp.ID = checkpointer.NewID(i)
			if last, err = s.Put(ctx, last, cp, checkpointer.Metadata{"run_id": thread}, nv); err != nil {
				t.Fatal(err)
			}
		}
	}
	ops := []struct {
		name    string
		fn      func() error
		orphans bool
	}{
		{"Prune", func() error { return s.Prune(ctx, []string{"p"}, checkpointer.PruneKeepLatest) }, true},
		{"DeleteForRuns", func() error { return s.DeleteForRuns(ctx, []string{"r"}) }, false},
		{"DeleteCheckpoint", func() error {
			tup, err := s.GetTuple(ctx, checkpointer.Config{ThreadID: "d"})
			if err != nil {
				return err
			}
			heads(&log)
			return s.DeleteCheckpoint(ctx, tup.Config)
		}, false},
		{"Sweep KeepLatest", func() error {
			_, err := s.Sweep(ctx, checkpointer.RetentionPolicy{KeepLatest: 1}, checkpointer.SweepOptions{})
			return err
		}, false},
		{"Sweep IdleTTL", func() error {
			_, err := s.Sweep(ctx, checkpointer.RetentionPolicy{IdleTTL: time.Nanosecond}, checkpointer.SweepOptions{})
			return err
		}, true},
	}
	for _, op := range ops {
		for _, th := range []string{"p", "r", "d"} {
			chain(th, 3)
		}
		heads(&log)
		if err := op.fn(); err != nil {
			t.Fatalf("%s: %v", op.name, err)
		}
		got := heads(&log)
		if want := map[bool]int{false: 2, true: 0}[op.name == "Prune"]; len(got) != want {
			t.Errorf("%s read the heads %d times, want %d:\n%s", op.name, len(got), want, strings.Join(got, "\n--\n"))
		}
		for i, h := range got {
			if orphans := strings.Contains(h, "checkpoint_writes"); orphans != (op.orphans && i == 0) {
				t.Errorf("%s: heads read %d read the writes (orphan write sets): %v, want %v", op.name, i+1, orphans, op.orphans && i == 0)
			}
		}
	}
}
