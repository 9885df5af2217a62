package vault

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/checkpointer/pgsaver"
	"github.com/memvault/memvault/keys"
)

// loseForgetLockS25b takes the erasure lock away from a Forget that holds
// it, the way an operator or the system can: on PostgreSQL the lock's own
// backend is terminated (pg_terminate_backend, an idle-session timeout, a
// pooler or failover dropping the connection); on SQLite the lock file is
// removed (a cleanup of "stray" files beside the database).
func loseForgetLockS25b(t *testing.T, ctx context.Context, h *Handle) {
	t.Helper()
	if h.Pool != nil {
		var n int
		if err := h.Pool.QueryRow(ctx, `SELECT count(pg_terminate_backend(pid)) FROM pg_locks WHERE `+forgetLockHeldS25b,
			forgetLockKeyS25b(h)).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			t.Fatal("no erasure lock held while the Forget is paused")
		}
		// pg_terminate_backend only signals: wait until the lock is gone
		// (up to 30 s: a loaded server may take a while to end it).
		for i := 0; i < 3000; i++ {
			if forgetLockHolders(t, ctx, h) == 0 {
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
		t.Fatal("the terminated backend still holds its advisory lock")
	}
	if err := os.Remove(h.dbPath + forgetLockSuffix); err != nil {
		t.Fatal(err)
	}
}

// forgetLockHeldS25b selects, in pg_locks, the erasure lock of the key
// table whose lock key is $1 (a bigint advisory lock: classid the high 32
// bits, objid the low, objsubid 1), and nothing of other tests.
const forgetLockHeldS25b = `locktype = 'advisory' AND granted AND objsubid = 1
	AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
	AND ((classid::bigint << 32) | objid::bigint) = hashtextextended($1, 0)`

// forgetLockKeyS25b is h's erasure lock's key (pgForgetLock.key).
func forgetLockKeyS25b(h *Handle) string { return "memvault_erasure_intents/" + h.keyTableID }

// forgetLockHolders counts the sessions holding h's erasure lock.
func forgetLockHolders(t *testing.T, ctx context.Context, h *Handle) int {
	t.Helper()
	var n int
	if err := h.Pool.QueryRow(ctx, `SELECT count(*) FROM pg_locks WHERE `+forgetLockHeldS25b, forgetLockKeyS25b(h)).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestReviewS25bForgetLosesItsLock (session 25 review 2): the erasure lock
// is taken once and never looked at again. When the Forget loses it while
// paused between its claim and its key transaction (its PostgreSQL lock
// session terminated; its SQLite lock file removed), ForgetWith does not
// notice, and an Open meanwhile takes the now free lock and finishes the
// live Forget's intent as a killed one's: the very double erasure record
// and false "did not finish" warning the lock was added to prevent
// (TestOpenLeavesALiveForgetsIntent), and a Forget of another subject
// meanwhile is no longer serialised after it.
func TestReviewS25bForgetLosesItsLock(t *testing.T) {
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
			loseForgetLockS25b(t, ctx, h)
			h2, err := Open(ctx, c)
			if err != nil {
				_ = resume()
				t.Fatalf("Open while a Forget runs: %v", err)
			}
			warned := strings.Join(h2.Warnings, "\n")
			h2.Close()
			ferr := resume()
			if ferr == nil && warned != "" {
				t.Errorf("Forget(carol) lost its erasure lock and returned success; an Open meanwhile finished its intent as a killed Forget's: %q", warned)
			}
			if n := subjectErasures(t, h, "carol"); ferr == nil && n != 1 {
				t.Errorf("%d subject.erase records of carol for one Forget, want 1", n)
			}
			if tup, err := h.Saver.GetTuple(ctx, checkpointer.Config{ThreadID: "carol:1"}); err == nil && tup != nil {
				t.Errorf("carol:1 reads after Forget(carol)")
			}
			if ferr != nil {
				t.Logf("Forget noticed: %v", ferr)
			}
		})
	}
}

// TestReviewS25bSymlinkedDatabaseTwoLocks (session 25 review 2): the
// SQLite erasure lock is the file named DBPath + ".forget-lock", so two
// processes naming one database by two paths (a symlink such as
// /srv/agent/current.db → releases/agent.db; SQLite itself follows it and
// shares its locks) lock two different files. An Open through the second
// name while a Forget through the first is paused after its claim finds
// the lock free and finishes the live Forget's intent: a second
// subject.erase record and a false "did not finish" warning. The lock
// file should be derived from the resolved path (filepath.EvalSymlinks),
// or the lock taken on the database file's inode by another means.
func TestReviewS25bSymlinkedDatabaseTwoLocks(t *testing.T) {
	ctx := context.Background()
	c := subjectsConfigOn(t, false)
	c.Audit = true
	c.KeyTable = c.DBPath + ".keys"
	c.AuditTable = c.DBPath + ".audit"
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
	link := filepath.Join(t.TempDir(), "current.db")
	if err := os.Symlink(c.DBPath, link); err != nil {
		t.Fatal(err)
	}
	c2 := c
	c2.DBPath = link
	resume := forgetPausedAfterClaim(t, ctx, h, "carol")
	h2, err := Open(ctx, c2)
	if err != nil {
		_ = resume()
		t.Fatalf("Open through the symlink while a Forget runs: %v", err)
	}
	warned := strings.Join(h2.Warnings, "\n")
	h2.Close()
	if err := resume(); err != nil {
		t.Fatalf("the Forget: %v", err)
	}
	if warned != "" {
		t.Errorf("an Open through a symlink to the database, while Forget(carol) ran, finished its intent: %q", warned)
	}
	if n := subjectErasures(t, h, "carol"); n != 1 {
		t.Errorf("%d subject.erase records of carol for one Forget, want 1", n)
	}
}

// TestReviewS25bEpochRowCouplesSubjects (session 25 review 2, PostgreSQL):
// the guard's answer to REPEATABLE READ writers (meta/03) is one row,
// erasure_epoch, that every non-READ-COMMITTED guarded write locks FOR
// SHARE until its transaction ends and every erasure rewrites. Before it,
// Forget(carol) waited only for writes of carol (the per-subject advisory
// lock); now an open REPEATABLE READ transaction that wrote dave — the
// caller's, through PutTx, or any transaction once the database or role
// sets default_transaction_isolation — blocks every Forget of every
// subject, which fails after the 10 s lock wait: one slow transaction of
// one user stops all erasures. Proposed fix: one epoch row per hash
// bucket of the subject (erasure_epoch:<hash(subject) mod 64>, created by
// migration), locked and rewritten like erasure_epoch is now.
func TestReviewS25bEpochRowCouplesSubjects(t *testing.T) {
	ctx := context.Background()
	c := subjectsConfigOn(t, true)
	w, err := Open(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	for _, th := range []string{"carol:1", "dave:1"} {
		if _, err := putCarolS22(ctx, w, th, th+" notes"); err != nil {
			t.Fatal(err)
		}
	}
	tx, err := w.Pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead})
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	saver := w.Saver.(*pgsaver.Saver)
	cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(0), ChannelValues: map[string]any{"notes": "dave's new notes"},
		ChannelVersions: map[string]string{"notes": saver.NextVersion("")}}
	if _, err := saver.PutTx(ctx, tx, checkpointer.Config{ThreadID: "dave:1"}, cp, nil, cp.ChannelVersions); err != nil {
		t.Fatal(err)
	}
	h, err := Open(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	// Pending is the purge's rightful answer (the open snapshot predates
	// the keys' destruction and could still read their rows); the finding
	// was Forget failing before it destroyed any key, on the lock timeout
	// of the one epoch row dave's transaction held.
	if _, err := h.ForgetWith(ctx, "carol", ForgetOptions{Wait: -1}); err != nil && !errors.Is(err, keys.ErrErasurePending) {
		t.Errorf("Forget(carol) while a REPEATABLE READ transaction that wrote only dave is open: %v", err)
	}
}

// TestReviewS25bLockFileSymlinkFollowed (session 25 review 2, SQLite): the
// erasure lock file is opened with O_CREATE and without O_NOFOLLOW, so a
// symlink planted at <db>.forget-lock (by whoever can write the
// database's directory, or left by an operator's "cp -s"/backup restore)
// is followed: Forget creates a file at the link's target, anywhere the
// process may write, and locks that. A target the planter can open (a
// world-writable file of theirs) lets them hold the lock from outside:
// every Forget then waits without bound and no Open finishes a killed
// Forget's intent. Proposed fix: O_NOFOLLOW (and refuse a lock file that
// is not a regular file of this uid, naming it).
func TestReviewS25bLockFileSymlinkFollowed(t *testing.T) {
	ctx := context.Background()
	c := subjectsConfigOn(t, false)
	h, err := Open(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if _, err := putCarolS22(ctx, h, "carol:1", "carol notes"); err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(t.TempDir(), "planted")
	if err := os.Symlink(target, c.DBPath+forgetLockSuffix); err != nil {
		t.Fatal(err)
	}
	_, ferr := h.Forget(ctx, "carol")
	if _, err := os.Lstat(target); err == nil {
		t.Errorf("Forget(carol) followed a symlink planted at %s and created %s (Forget: %v)", filepath.Base(c.DBPath+forgetLockSuffix), target, ferr)
	}
}

// TestReviewS25bSnapshotTxVariants (session 25 review 2, holds unless it
// fails): TestReviewS25RepeatableReadTxOutlivesGuard's stale caller's
// transaction, begun before Forget(carol) and writing carol after it
// returned, also as SERIALIZABLE, with the copy's key table through
// MEMVAULT_KEY_DSN, and on Citus: every one must be refused.
func TestReviewS25bSnapshotTxVariants(t *testing.T) {
	for _, tc := range []struct {
		name         string
		apart, citus bool
		iso          pgx.TxIsoLevel
	}{
		{"Serializable", false, false, pgx.Serializable},
		{"KeyDSNRepeatableRead", true, false, pgx.RepeatableRead},
		{"KeyDSNSerializable", true, false, pgx.Serializable},
		{"CitusRepeatableRead", false, true, pgx.RepeatableRead},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			live, onCopy := carolThenCopy(t, true, tc.apart, tc.citus)
			stale, err := Open(ctx, onCopy)
			if err != nil {
				t.Fatal(err)
			}
			defer stale.Close()
			tx, err := stale.Pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: tc.iso})
			if err != nil {
				t.Fatal(err)
			}
			defer tx.Rollback(ctx)
			if _, err := tx.Exec(ctx, `SELECT 1`); err != nil {
				t.Fatal(err)
			}
			h, err := Open(ctx, live)
			if err != nil {
				t.Fatal(err)
			}
			defer h.Close()
			if _, err := h.ForgetWith(ctx, "carol", ForgetOptions{Wait: -1}); err != nil && !errors.Is(err, keys.ErrErasurePending) {
				t.Fatal(err)
			}
			saver := stale.Saver.(*pgsaver.Saver)
			cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(0), ChannelValues: map[string]any{"notes": "carol takes insulin"},
				ChannelVersions: map[string]string{"notes": saver.NextVersion("")}}
			_, perr := saver.PutTx(ctx, tx, checkpointer.Config{ThreadID: "carol:2"}, cp, nil, cp.ChannelVersions)
			cerr := error(nil)
			if perr == nil {
				cerr = tx.Commit(ctx)
			}
			var n int
			if err := h.Pool.QueryRow(ctx, `SELECT count(*) FROM checkpoints WHERE thread_id = 'carol:2'`).Scan(&n); err != nil {
				t.Fatal(err)
			}
			if n > 0 {
				t.Fatalf("a %s transaction on a copy of the key table, begun before Forget(carol), wrote carol:2 after it (put: %v, commit: %v)", tc.name, perr, cerr)
			}
			t.Logf("refused: put %v, commit %v", perr, cerr)
		})
	}
}

// TestReviewS25bCopySkipsIntentItCannotVerify (session 25 review 2):
// TestReviewS25CopyCatchesUpAfterKilledForget, fixed by finishKilled (a
// Forget first finishes the intents not done), in the middle of a master
// key rotation: the live process that ran Forget(carol) — killed after
// its key transaction, before the database's count moved — had the new
// key primary (old one previous), so its intent is signed under the new
// key; the process on the copy of the key table still runs with the old
// key only (the documented rotation moves processes one by one). Its
// Forget(dave) cannot verify carol's intent, leaves it alone (a warning),
// still claims — the key table counts K, as the database has seen — and
// records dave's guard at have+1 = K+1 = erased_subject:carol: the copy's
// count reaches carol's record and it writes carol again, under the key
// the live table destroyed. Proposed fix: a claim that leaves an intent
// not done behind it (not finished, any reason) is refused, or at least
// guardAt = max(have+1, every guard record of an intent not done + 1) —
// never let a Forget's count pass an erasure it did not perform.
func TestReviewS25bCopySkipsIntentItCannotVerify(t *testing.T) {
	for _, pg := range []bool{false, true} {
		t.Run(map[bool]string{false: "SQLite", true: "PostgreSQL"}[pg], func(t *testing.T) {
			ctx := context.Background()
			live, onCopy := carolThenCopy(t, pg, false, false)
			stale, err := Open(ctx, onCopy) // the old key only
			if err != nil {
				t.Fatal(err)
			}
			defer stale.Close()
			if _, err := putCarolS22(ctx, stale, "dave:1", "dave is fine"); err != nil {
				t.Fatal(err)
			}
			rotated := live
			rotated.Keys.Primary, rotated.Keys.Previous = otherKey, []string{live.Keys.Primary}
			worker, err := Open(ctx, rotated)
			if err != nil {
				t.Fatal(err)
			}
			// worker's Forget(carol): intent, key transaction, then killed.
			if _, err := worker.claimErasure(ctx, "carol"); err != nil {
				t.Fatal(err)
			}
			if _, err := worker.Keys.StartErasure(ctx, "carol"); err != nil {
				t.Fatal(err)
			}
			worker.Close()
			if _, err := putCarolS22(ctx, stale, "carol:2", "carol takes insulin"); !errors.Is(err, keys.ErrSubjectErased) {
				t.Fatalf("control: the copy's put of carol after the killed Forget(carol): %v, want keys.ErrSubjectErased", err)
			}
			var progress []string
			_, ferr := stale.ForgetWith(ctx, "dave", ForgetOptions{Progress: func(s string) { progress = append(progress, s) }})
			_, _ = putCarolS22(ctx, stale, "erin:1", "erin is fine") // keys read: the guard's count read again
			var problems []string
			for op, err := range carolWrites(ctx, stale, 3) {
				if err == nil {
					problems = append(problems, fmt.Sprintf("%s of carol succeeded", op))
				}
			}
			if len(problems) > 0 {
				t.Fatalf("a process on a copy of the key table with the old master key only, after a Forget(carol) by a process with the "+
					"new key killed past its key transaction, and its own Forget(dave) (err %v; progress %q): %s", ferr, progress, strings.Join(problems, "; "))
			}
		})
	}
}

// TestReviewS25bEpochRowDeletedStaysDeleted (session 25 review 2,
// PostgreSQL): the erasure_epoch row is inserted once, by migration
// meta/02, and again only by a Forget. Deleted (an operator "resetting"
// memvault_meta's erasure rows, a partial restore), every guarded write
// in a REPEATABLE READ or SERIALIZABLE transaction — every write at all
// once default_transaction_isolation is set on the database — fails,
// whatever its subject, and a restart does not help: Open does not put
// the row back. Proposed fix: Open (or ErasureGuardSQL) inserts it ON
// CONFLICT DO NOTHING each time, as migration 02 did.
func TestReviewS25bEpochRowDeletedStaysDeleted(t *testing.T) {
	ctx := context.Background()
	c := subjectsConfigOn(t, true)
	h, err := Open(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := putCarolS22(ctx, h, "dave:1", "dave notes"); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Pool.Exec(ctx, `DELETE FROM memvault_meta WHERE name LIKE 'erasure_epoch%'`); err != nil {
		t.Fatal(err)
	}
	h.Close()
	h, err = Open(ctx, c) // the restart
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	tx, err := h.Pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead})
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	saver := h.Saver.(*pgsaver.Saver)
	cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(0), ChannelValues: map[string]any{"notes": "dave's new notes"},
		ChannelVersions: map[string]string{"notes": saver.NextVersion("")}}
	if _, err := saver.PutTx(ctx, tx, checkpointer.Config{ThreadID: "dave:1"}, cp, nil, cp.ChannelVersions); err != nil {
		t.Errorf("a REPEATABLE READ write of dave (never erased) after the epoch row was deleted and the process restarted: %v", err)
	}
}

// TestReviewS25bIdleSessionTimeoutDropsLock (session 25 review 2,
// PostgreSQL): TestReviewS25bForgetLosesItsLock without anyone killing
// anything. The lock's session sits idle while the Forget works on other
// connections (waiting up to 10 s for the subject's writers, finishing
// killed Forgets' intents, destroying keys), and idle_session_timeout —
// set by many managed PostgreSQL services or DBAs to reap idle
// connections, here through the DSN's options, which the lock's
// connection inherits — ends that session: the lock is gone, Forget does
// not notice, and an Open meanwhile finishes the live Forget's intent.
// Proposed fix: SET idle_session_timeout = 0 (and
// idle_in_transaction_session_timeout) on the lock's connection, and
// check the lock is still held (a query on its connection) before the key
// transaction and the done mark, failing the Forget otherwise.
func TestReviewS25bIdleSessionTimeoutDropsLock(t *testing.T) {
	ctx := context.Background()
	c := subjectsConfigOn(t, true)
	c.Audit = true
	u, err := url.Parse(c.DSN)
	if err != nil || u.Scheme == "" {
		t.Fatalf("pgtest's DSN is not a URL (%v)", err)
	}
	q := u.Query()
	q.Set("idle_session_timeout", "1000") // a run-time parameter of the startup packet
	u.RawQuery = q.Encode()
	c.DSN = u.String()
	h, err := Open(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if _, err := putCarolS22(ctx, h, "carol:1", "carol notes"); err != nil {
		t.Fatal(err)
	}
	resume := forgetPausedAfterClaim(t, ctx, h, "carol")
	// The Forget is busy elsewhere (a writer may hold it up to 10 s):
	// its lock's session is idle meanwhile, three times the timeout the
	// DSN sets; the lock's session turns the timeout off (the fix), so
	// the lock is still held.
	time.Sleep(3 * time.Second)
	if held := forgetLockHolders(t, ctx, h); held == 0 {
		t.Errorf("idle_session_timeout (1 s, from the DSN) ended the erasure lock's idle session within 3 s")
	}
	h2, err := Open(ctx, c)
	if err != nil {
		_ = resume()
		t.Fatalf("Open while a Forget runs: %v", err)
	}
	warned := strings.Join(h2.Warnings, "\n")
	h2.Close()
	ferr := resume()
	if ferr == nil && warned != "" {
		t.Errorf("idle_session_timeout ended the erasure lock's session; Forget(carol) returned success and an Open meanwhile finished its intent: %q", warned)
	}
	if n := subjectErasures(t, h, "carol"); ferr == nil && n != 1 {
		t.Errorf("%d subject.erase records of carol for one Forget, want 1", n)
	}
}
