package vault

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/memvault/memvault/checkpointer"
)

// TestForgetLockWaitBounded (session 25's closing note): a Forget waited
// for the erasure lock with no bound, so a Forget stuck while holding it
// (its key table's transaction waiting on a lock of its own) kept every
// later Forget of the database waiting for ever. The wait is now bounded
// (ForgetOptions.LockWait, DefaultForgetLockWait when 0): past it the
// Forget fails with ErrErasureLocked, having claimed and changed nothing;
// a ctx deadline that comes first wins with ctx's error.
func TestForgetLockWaitBounded(t *testing.T) {
	ctx := context.Background()
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			h, err := Open(ctx, subjectsConfigOn(t, backend == "postgres"))
			if err != nil {
				t.Fatal(err)
			}
			defer h.Close()
			if _, err := putCarolS22(ctx, h, "carol:1", "carol notes"); err != nil {
				t.Fatal(err)
			}
			l := h.forgetLock()
			if l == nil {
				t.Fatal("no erasure lock")
			}
			// Another Forget holds the lock.
			held, err := l.lock(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer held.release()
			before, err := h.keyTable.Erasures(ctx)
			if err != nil {
				t.Fatal(err)
			}
			for _, wait := range []time.Duration{200 * time.Millisecond, -1} {
				// The test's own bound: the old, unbounded wait ended only here.
				tctx, cancel := context.WithTimeout(ctx, 30*time.Second)
				_, err = h.ForgetWith(tctx, "carol", ForgetOptions{LockWait: wait})
				cancel()
				if !errors.Is(err, ErrErasureLocked) || !strings.Contains(err.Error(), "another forget holds the erasure lock") ||
					!strings.Contains(err.Error(), "run it again") {
					t.Fatalf("Forget (LockWait %s) while another holds the erasure lock: %v; want ErrErasureLocked saying what to do", wait, err)
				}
			}
			// A ctx deadline before the bound wins, with ctx's error.
			dctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
			_, err = h.ForgetWith(dctx, "carol", ForgetOptions{LockWait: time.Hour})
			cancel()
			if !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, ErrErasureLocked) {
				t.Fatalf("Forget with a ctx deadline before LockWait: %v; want context.DeadlineExceeded", err)
			}
			// Nothing claimed, nothing changed.
			intents, err := h.erasureMarks.(intentMarks).MarksBetween(ctx, intentPrefix, intentBelow, 10)
			if err != nil {
				t.Fatal(err)
			}
			if len(intents) != 0 {
				t.Errorf("a Forget that did not get the lock claimed intents %q", intents)
			}
			if after, err := h.keyTable.Erasures(ctx); err != nil || after != before {
				t.Errorf("the key table counts %d erasures (%v), %d before the refused Forgets", after, err, before)
			}
			if tup, err := h.Saver.GetTuple(ctx, checkpointer.Config{ThreadID: "carol:1"}); err != nil || tup == nil {
				t.Errorf("carol:1 after the refused Forgets: %v, %v; want it readable", tup, err)
			}
			held.release()
			// A minute, not the refused cases' 200 ms: on PostgreSQL the
			// wait covers a new connection (a backend forked and started)
			// and the released holder's backend exiting, which a loaded
			// machine under -race can stretch past 200 ms. A lock that is
			// never released still fails, at the bound.
			if _, err := h.ForgetWith(ctx, "carol", ForgetOptions{LockWait: time.Minute}); err != nil {
				t.Fatalf("Forget once the lock is free: %v", err)
			}
		})
	}
}
