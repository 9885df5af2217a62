package vault

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/memvault/memvault/audit"
	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/memvaulttest/childproc"
)

// subjectErasures counts the audit trail's subject.erase records of
// subject.
func subjectErasures(t *testing.T, h *Handle, subject string) int {
	t.Helper()
	n := 0
	if err := h.Audit.Records(context.Background(), audit.Filter{}, func(r audit.Record) error {
		if r.Op == audit.OpSubjectErase && r.Subject == subject {
			n++
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return n
}

// forgetPausedAfterClaim starts h.Forget(subject) and returns once it has
// claimed its intent, paused there (Handle.afterClaim) until resume, which
// lets it go on and returns its error (once; later calls return it again).
func forgetPausedAfterClaim(t *testing.T, ctx context.Context, h *Handle, subject string) (resume func() error) {
	t.Helper()
	reached, release := make(chan struct{}), make(chan struct{})
	h.afterClaim = func(int64) { close(reached); <-release }
	done := make(chan error, 1)
	go func() { _, err := h.Forget(ctx, subject); done <- err }()
	select {
	case <-reached:
	case err := <-done:
		t.Fatalf("Forget(%s) returned before its key transaction: %v", subject, err)
	}
	var once sync.Once
	var err error
	return func() error {
		once.Do(func() { close(release); err = <-done })
		return err
	}
}

// TestOpenLeavesALiveForgetsIntent (session 24's closing note): an Open
// run while a Forget is between its intent and its key transaction took
// the intent for a killed Forget's and finished it itself: a second
// subject.erase record in the audit trail, and a warning saying a Forget
// "recorded and did not finish" an erasure that was running. The Forget
// now holds a lock from before its claim until its intent is done (a
// PostgreSQL advisory lock, a file lock beside a SQLite database), and
// Open leaves an intent whose lock is held.
func TestOpenLeavesALiveForgetsIntent(t *testing.T) {
	ctx := context.Background()
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			c := subjectsConfigOn(t, backend == "postgres")
			c.Audit = true
			h, err := Open(ctx, c)
			if err != nil {
				t.Fatal(err)
			}
			defer h.Close()
			for _, th := range []string{"carol:1", "dave:1"} {
				if _, err := putCarolS22(ctx, h, th, th+" notes"); err != nil {
					t.Fatal(err)
				}
			}
			resume := forgetPausedAfterClaim(t, ctx, h, "carol")
			h2, err := Open(ctx, c)
			if err != nil {
				_ = resume()
				t.Fatalf("Open while a Forget runs: %v", err)
			}
			warned := strings.Join(h2.Warnings, "\n")
			h2.Close()
			if err := resume(); err != nil {
				t.Fatalf("the Forget: %v", err)
			}
			if warned != "" {
				t.Errorf("an Open while Forget(carol) ran warned: %q", warned)
			}
			if n := subjectErasures(t, h, "carol"); n != 1 {
				t.Errorf("%d subject.erase records of carol for one Forget, want 1", n)
			}
			if tup, err := h.Saver.GetTuple(ctx, checkpointer.Config{ThreadID: "carol:1"}); err == nil && tup != nil {
				t.Errorf("carol:1 reads after Forget(carol)")
			}
			// The next Open finds nothing to finish.
			h3, err := Open(ctx, c)
			if err != nil {
				t.Fatal(err)
			}
			warned = strings.Join(h3.Warnings, "\n")
			h3.Close()
			if warned != "" {
				t.Errorf("an Open after the Forget warned: %q", warned)
			}
		})
	}
}

// TestKilledForgetsIntentFinishedByNextOpen: a Forget killed (another
// process, SIGKILL) between its intent and its key transaction holds no
// lock once dead, so the next Open finishes its erasure, says so and
// records it.
func TestKilledForgetsIntentFinishedByNextOpen(t *testing.T) {
	ctx := context.Background()
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			c := subjectsConfigOn(t, backend == "postgres")
			c.Audit = true
			rc := raceConfig{DB: c.DBPath, DSN: c.DSN, KeyTable: c.KeyTable}
			c = rc.config()
			c.Audit = true
			h, err := Open(ctx, c)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := putCarolS22(ctx, h, "carol:1", "carol notes"); err != nil {
				t.Fatal(err)
			}
			h.Close()
			forgetter := childproc.Start(t, "TestErasureChild", struct {
				Role string
				RC   raceConfig
			}{"forget-paused", rc})
			select {
			case l := <-forgetter.Lines:
				if l != "claimed" {
					t.Fatalf("forgetter: %q", l)
				}
			case <-time.After(time.Minute):
				t.Fatal("the forgetter did not claim its intent")
			}
			forgetter.Kill()
			h, err = Open(ctx, c)
			if err != nil {
				t.Fatal(err)
			}
			defer h.Close()
			if !strings.Contains(strings.Join(h.Warnings, "\n"), `data subject "carol"`) {
				t.Errorf("the Open after a killed Forget(carol) did not finish it: warnings %q", h.Warnings)
			}
			if tup, err := h.Saver.GetTuple(ctx, checkpointer.Config{ThreadID: "carol:1"}); err == nil && tup != nil {
				t.Errorf("carol:1 reads after the killed Forget's erasure was finished")
			}
		})
	}
}

// TestConcurrentForgetsClaimInOrder (session 24's closing note): two
// Forgets at once claimed intents n and n+1, and the second could start
// its erasure in the key table first, which then counted n: the guard's
// record of the second subject (n+1) was past the table's count until the
// first Forget's key transaction ran, so a live writer of the readmitted
// subject was refused meanwhile — and for good if the first Forget was
// killed. Forgets now take the erasure lock from before their claim to
// their done mark: a Forget claims only once every earlier claim is
// started, so at its claim the key table counts exactly the intents
// before it.
//
// While the first Forget is paused after its claim, a second one that
// does not wait (LockWait negative) is refused and claims nothing; one
// that waits is seen waiting for the lock (PostgreSQL: its session in
// pg_locks, not granted; SQLite: its descriptor of the lock file open
// beside the holder's, which it keeps only inside the lock's wait) before
// the first goes on, and then claims in order.
func TestConcurrentForgetsClaimInOrder(t *testing.T) {
	ctx := context.Background()
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			c := subjectsConfigOn(t, backend == "postgres")
			a, err := Open(ctx, c)
			if err != nil {
				t.Fatal(err)
			}
			defer a.Close()
			for _, th := range []string{"carol:1", "dave:1"} {
				if _, err := putCarolS22(ctx, a, th, th+" notes"); err != nil {
					t.Fatal(err)
				}
			}
			bCfg, bApp := c, ""
			if c.DSN != "" {
				bCfg.DSN, bApp = appDSN(t, c.DSN)
			}
			b, err := Open(ctx, bCfg)
			if err != nil {
				t.Fatal(err)
			}
			defer b.Close()
			reached, release := make(chan struct{}), make(chan struct{})
			a.afterClaim = func(int64) { close(reached); <-release }
			type claim struct{ intent, counted int64 }
			bClaimed := make(chan claim, 2)
			b.afterClaim = func(n int64) {
				have, err := b.keyTable.Erasures(ctx)
				if err != nil {
					t.Error(err)
				}
				bClaimed <- claim{n, have}
			}
			aDone, bDone := make(chan error, 1), make(chan error, 1)
			go func() { _, err := a.Forget(ctx, "carol"); aDone <- err }()
			<-reached
			defer func() {
				select {
				case <-release:
				default:
					close(release)
				}
			}()
			// A Forget that does not wait: refused, having claimed nothing
			// (before the lock it claimed at once).
			_, err = b.ForgetWith(ctx, "dave", ForgetOptions{LockWait: -1})
			select {
			case cl := <-bClaimed:
				t.Fatalf("Forget(dave) claimed intent %d (the key table counting %d erasures) while Forget(carol) had claimed its own "+
					"and not started it: dave's guard record stood past the count until carol's key transaction", cl.intent, cl.counted)
			default:
			}
			if !errors.Is(err, ErrErasureLocked) {
				t.Fatalf("Forget(dave), not waiting, while Forget(carol) is paused after its claim: %v, want ErrErasureLocked", err)
			}
			// A Forget that waits: seen waiting, then carol's goes on.
			go func() { _, err := b.Forget(ctx, "dave"); bDone <- err }()
			if bApp != "" {
				if !awaitAdvisoryWait(t, ctx, a.Pool, forgetLockKeyS25b(b), bApp, 0, bDone) {
					t.Fatalf("Forget(dave) ended without waiting while Forget(carol) held the erasure lock: %v", <-bDone)
				}
			} else if !awaitLockFileWait(t, lockPath(c.DBPath), bDone) {
				t.Fatalf("Forget(dave) ended without waiting while Forget(carol) held the erasure lock: %v", <-bDone)
			}
			close(release)
			if err := <-aDone; err != nil {
				t.Fatalf("Forget(carol): %v", err)
			}
			if err := <-bDone; err != nil {
				t.Fatalf("Forget(dave): %v", err)
			}
			got := <-bClaimed
			if got.counted != got.intent-1 {
				t.Fatalf("Forget(dave) claimed intent %d when the key table counted %d erasures: an earlier claim was not started", got.intent, got.counted)
			}
			// The readmitted subject writes again.
			if err := b.Readmit(ctx, "dave"); err != nil {
				t.Fatal(err)
			}
			if _, err := putCarolS22(ctx, b, "dave:2", "back"); err != nil {
				t.Fatalf("dave after Readmit: %v", err)
			}
		})
	}
}

// TestForgetFinishesAKilledForgetsIntentFirst: a Forget killed after its
// claim (intent n, keys not destroyed) left the next Forget to claim n+1
// and start its erasure as the key table's n-th: that subject's guard
// record (n+1) stood past the count, so once it was readmitted its writes
// were refused until some process opened the database and finished the
// killed intent. A Forget, holding the erasure lock (no other Forget is
// live), now finishes the intents not done before it claims its own.
func TestForgetFinishesAKilledForgetsIntentFirst(t *testing.T) {
	ctx := context.Background()
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			c := subjectsConfigOn(t, backend == "postgres")
			c.Audit = true
			h, err := Open(ctx, c)
			if err != nil {
				t.Fatal(err)
			}
			defer h.Close()
			for _, th := range []string{"carol:1", "dave:1"} {
				if _, err := putCarolS22(ctx, h, th, th+" notes"); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := h.claimErasure(ctx, "carol"); err != nil { // Forget(carol) killed right after
				t.Fatal(err)
			}
			if _, err := h.Forget(ctx, "dave"); err != nil {
				t.Fatal(err)
			}
			if err := h.Readmit(ctx, "dave"); err != nil {
				t.Fatal(err)
			}
			if got, err := putCarolS22(ctx, h, "dave:2", "dave is back"); err != nil || got != "dave is back" {
				t.Fatalf("dave, readmitted after his Forget, which ran after a killed Forget(carol): %q, %v", got, err)
			}
			if tup, err := h.Saver.GetTuple(ctx, checkpointer.Config{ThreadID: "carol:1"}); err == nil && tup != nil {
				t.Errorf("carol:1 reads after a Forget finished her killed erasure")
			}
			if n := subjectErasures(t, h, "carol"); n != 1 {
				t.Errorf("%d subject.erase records of carol, want 1 (the one the Forget that finished it wrote)", n)
			}
		})
	}
}

// TestForgetRerunAfterKilledClaim: forget run again after a Forget of the
// same subject was killed past its claim finishes the erasure with one
// audit record per run (the killed run's and this one's), and the subject,
// readmitted, writes again: the rerun's guard record is not past the key
// table's count.
func TestForgetRerunAfterKilledClaim(t *testing.T) {
	ctx := context.Background()
	c := subjectsConfigOn(t, false)
	c.Audit = true
	h, err := Open(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if _, err := putCarolS22(ctx, h, "carol:1", "carol notes"); err != nil {
		t.Fatal(err)
	}
	if err := h.log(ctx, audit.OpSubjectErase, "carol", "carol"); err != nil { // the killed run's first step
		t.Fatal(err)
	}
	if _, err := h.claimErasure(ctx, "carol"); err != nil { // killed right after
		t.Fatal(err)
	}
	r, err := h.Forget(ctx, "carol")
	if err != nil || r.Threads != 1 || !h.Keys.VerifyReceipt(r) {
		t.Fatalf("the rerun: %+v, %v", r, err)
	}
	if n := subjectErasures(t, h, "carol"); n != 2 {
		t.Errorf("%d subject.erase records of carol for two runs, want 2", n)
	}
	if err := h.Readmit(ctx, "carol"); err != nil {
		t.Fatal(err)
	}
	if got, err := putCarolS22(ctx, h, "carol:2", "back"); err != nil || got != "back" {
		t.Fatalf("carol readmitted after the rerun: %q, %v", got, err)
	}
}
