package vault

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/checkpointer/durable"
	"github.com/memvault/memvault/checkpointer/pgsaver"
	"github.com/memvault/memvault/config"
	"github.com/memvault/memvault/keys"
	"github.com/memvault/memvault/memvaulttest/pgtest"
	"github.com/memvault/memvault/store"
)

// Session 25 review: attacks on session 24's per-write erasure guard
// (erased_subject:S against the writer's key table's count of erasures).

// TestReviewS25CopyCatchesUpByForgetting: the guard compares a number —
// erased_subject:carol = n — with the writer's key table's count of
// erasures, and a copy's count is behind only until the copy starts an
// erasure of its own. A process already running on a copy of the key
// table (the careless operator's leftover job, TestRunningProcessOnCopiedKeyTable)
// serves a routine erasure request for dave after Forget(carol) ran on
// the live table: ForgetWith claims and destroys BEFORE it checks the
// counts (claimErasure reads seen > have and goes on; checkKeyErasures runs
// after StartErasure, when the copy's count has caught up), so the copy's
// Forget(dave) succeeds, the copy now counts as many erasures as the
// database has seen, and
//   - the process on the copy writes carol again, sealed under carol's
//     keys that only the copy holds (the guard's whole promise);
//   - a NEW process opened on the copy is accepted by Open (the count
//     check "a copy or a backup … is refused by vault.Open" no longer sees
//     it) and reads and writes carol;
//   - dave's keys stay in the live key table, while Forget(dave)
//     returned success.
func TestReviewS25CopyCatchesUpByForgetting(t *testing.T) {
	for _, tc := range []struct {
		name             string
		pg, apart, citus bool
	}{{"SQLite", false, false, false}, {"PostgreSQL", true, false, false}, {"PostgreSQLKeyDSN", true, true, false}, {"Citus", true, false, true}} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			live, onCopy := carolThenCopy(t, tc.pg, tc.apart, tc.citus)
			stale, err := Open(ctx, onCopy) // running before the erasure
			if err != nil {
				t.Fatal(err)
			}
			defer stale.Close()
			h, err := Open(ctx, live)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := putCarolS22(ctx, h, "dave:1", "dave is fine"); err != nil {
				t.Fatal(err)
			}
			if _, err := h.Forget(ctx, "carol"); err != nil {
				t.Fatal(err)
			}
			h.Close()
			// Control: the guard refuses the copy's write of carol.
			if _, err := putCarolS22(ctx, stale, "carol:2", "carol takes insulin"); !errors.Is(err, keys.ErrSubjectErased) {
				t.Fatalf("control: the copy's put of carol after Forget(carol): %v, want keys.ErrSubjectErased", err)
			}

			// The stale process serves an erasure request for dave.
			_, ferr := stale.Forget(ctx, "dave")
			// Ordinary traffic: a new subject's keys read from the copy
			// (the guard's count is read again with them).
			_, _ = putCarolS22(ctx, stale, "erin:1", "erin is fine")

			var problems []string
			if ferr == nil {
				problems = append(problems, "Forget(dave) on the copy of the key table returned success")
			}
			for op, err := range carolWrites(ctx, stale, 3) {
				if err == nil {
					problems = append(problems, fmt.Sprintf("then the running process on the copy: %s of carol succeeded", op))
				}
			}
			if h2, err := Open(ctx, onCopy); err == nil {
				defer h2.Close()
				problems = append(problems, "a new process on the copy was accepted by Open")
				if got, err := putCarolS22(ctx, h2, "carol:9", "carol takes insulin"); err == nil {
					problems = append(problems, fmt.Sprintf("and wrote and read back carol:9 (%q) under carol's erased keys", got))
				}
			}
			// Forget(dave) refused tells the operator to run it again on
			// the live table; returning success with dave's keys live
			// there is the problem.
			if hl, err := Open(ctx, live); err == nil && ferr == nil {
				if e, _ := hl.Keys.Erasure(ctx, "dave"); e == nil {
					problems = append(problems, "the live key table holds no erasure of dave (his keys are live there)")
				}
				hl.Close()
			}
			if len(problems) > 0 {
				t.Fatalf("after Forget(carol) on the live key table: %s", strings.Join(problems, "; "))
			}
		})
	}
}

// TestReviewS25IntentGapRefusesReadmittedSubject: erased_subject:S holds
// the number of S's erasure INTENT (claimErasure's n), and the guard
// compares it with the key table's count of erasures — two numbers that
// part whenever claimErasure skips a number it found taken. A taken number
// that no key transaction counts: a Forget killed between its intent and
// its key transaction (the state TestErasureIntentFinishedAtOpen starts
// from), or one row in memvault_meta from anyone who can write the data
// database (an intent this key did not sign: Open leaves it alone, for
// ever). Then Forget(dave) claims n+1 and marks erased_subject:dave = n+1
// while the key table counts n; once dave is readmitted every write of
// dave, by a process on the LIVE key table, is refused as "a copy or a
// backup of the key table" — for the killed Forget until some process
// opens the database again; for the planted row, for good (each later
// erasure is one ahead again).
func TestReviewS25IntentGapRefusesReadmittedSubject(t *testing.T) {
	for _, how := range []string{"killed Forget, long-running server", "one planted row"} {
		t.Run(how, func(t *testing.T) {
			ctx := context.Background()
			c := s23Config(t.TempDir())
			h, err := Open(ctx, c)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := putCarolS22(ctx, h, "carol:1", "carol's records"); err != nil {
				t.Fatal(err)
			}
			if how == "one planted row" {
				h.Close()
				if _, err := openRaw(t, c.DBPath).Exec(`INSERT INTO memvault_meta (name, value) VALUES (?, 'x')`, erasureIntentMark(1)); err != nil {
					t.Fatal(err)
				}
				if h, err = Open(ctx, c); err != nil {
					t.Fatal(err)
				}
			} else {
				worker, err := Open(ctx, c)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := worker.claimErasure(ctx, "carol"); err != nil { // Forget(carol) killed right after
					t.Fatal(err)
				}
				worker.Close()
			}
			defer h.Close()
			if _, err := putCarolS22(ctx, h, "dave:1", "dave's records"); err != nil {
				t.Fatal(err)
			}
			if _, err := h.Forget(ctx, "dave"); err != nil {
				t.Fatal(err)
			}
			if err := h.Readmit(ctx, "dave"); err != nil {
				t.Fatal(err)
			}
			_, err = putCarolS22(ctx, h, "dave:2", "dave is back")
			mark, _, _ := h.erasureMarks.MarkValue(ctx, keys.ErasedSubjectMark("dave"))
			have, _ := h.keyTable.Erasures(ctx)
			if err != nil {
				again := "not tried"
				if h2, oerr := Open(ctx, c); oerr == nil {
					_, perr := putCarolS22(ctx, h2, "dave:3", "dave is back")
					again = fmt.Sprint(perr)
					h2.Close()
				}
				t.Fatalf("dave readmitted on the live key table: his put is refused (erased_subject:dave = %s, the key table counts %d): %v; "+
					"after a new Open: %s", mark, have, err, again)
			}
		})
	}
}

// TestReviewS25EveryWritePathOnCopy: the write paths besides put,
// put_writes and store put, by processes running on a copy of the key
// table after Forget(carol) on the live table: group commit, async
// durability (queued, then flushed), copy thread (of no subject's) into a carol thread,
// ImportThread, a store Batch. Each must fail with keys.ErrSubjectErased
// (or store nothing that reads back).
func TestReviewS25EveryWritePathOnCopy(t *testing.T) {
	for _, pg := range []bool{false, true} {
		t.Run(map[bool]string{false: "SQLite", true: "PostgreSQL"}[pg], func(t *testing.T) {
			ctx := context.Background()
			live, onCopy := carolThenCopy(t, pg, false, false)
			h, err := Open(ctx, live)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := putCarolS22(ctx, h, "dave:1", "dave is fine"); err != nil {
				t.Fatal(err)
			}
			h.Close()
			grouped := onCopy
			grouped.GroupCommit = 4
			async := onCopy
			async.Durability = durable.Async
			var stales []*Handle
			for _, c := range []config.Config{onCopy, grouped, async} {
				s, err := Open(ctx, c)
				if err != nil {
					t.Fatal(err)
				}
				defer s.Close()
				stales = append(stales, s)
			}
			if _, err := putCarolS22(ctx, stales[0], "erin:1", "erin is fine"); err != nil { // keys the copy holds
				t.Fatal(err)
			}
			// A thread of no subject, to copy into a thread of carol's: a
			// copy from another subject's thread is refused before any key
			// is used (keys.ErrSubjectMismatch, TestCopyAcrossSubjectsRefused).
			if _, err := putCarolS22(ctx, stales[0], "lobby", "no one's"); err != nil {
				t.Fatal(err)
			}
			if h, err = Open(ctx, live); err != nil {
				t.Fatal(err)
			}
			if _, err := h.Forget(ctx, "carol"); err != nil {
				t.Fatal(err)
			}
			h.Close()

			plain, grp, asy := stales[0], stales[1], stales[2]
			got := map[string]error{}
			_, got["group commit put"] = putCarolS22(ctx, grp, "carol:20", "carol takes insulin")
			cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(0), ChannelValues: map[string]any{"notes": "carol takes insulin"},
				ChannelVersions: map[string]string{"notes": asy.Saver.NextVersion("")}}
			if _, err := asy.Saver.Put(ctx, checkpointer.Config{ThreadID: "carol:21"}, cp, nil, cp.ChannelVersions); err != nil {
				got["async put"] = err
			} else if f, ok := asy.Saver.(interface{ Flush(context.Context) error }); ok {
				got["async put"] = f.Flush(ctx)
			} else {
				got["async put"] = fmt.Errorf("no Flush on %T", asy.Saver)
			}
			if cpr, ok := plain.Saver.(checkpointer.Copier); ok {
				got["copy thread lobby -> carol:22"] = cpr.CopyThread(ctx, "lobby", "carol:22")
			} else {
				t.Errorf("%T is no Copier", plain.Saver)
			}
			if imp, ok := plain.Saver.(checkpointer.ThreadImporter); ok {
				cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(0), ChannelValues: map[string]any{"notes": "carol takes insulin"},
					ChannelVersions: map[string]string{"notes": plain.Saver.NextVersion("")}}
				got["import thread"] = imp.ImportThread(ctx, []checkpointer.ImportCheckpoint{{ThreadID: "carol:23", ID: cp.ID,
					Checkpoint: cp, NewVersions: cp.ChannelVersions}})
			} else {
				t.Errorf("%T is no ThreadImporter", plain.Saver)
			}
			_, got["store batch"] = plain.Store.Batch(ctx, []store.Op{store.PutOp{Namespace: store.Namespace{"users", "carol"}, Key: "b", Value: map[string]any{"v": "no peanuts"}}})
			for op, err := range got {
				if !errors.Is(err, keys.ErrSubjectErased) {
					t.Errorf("a process on a copy of the key table after Forget(carol): %s of carol: %v, want keys.ErrSubjectErased", op, err)
				}
			}
			for _, th := range []string{"carol:20", "carol:21", "carol:22", "carol:23"} {
				if tup, err := plain.Saver.GetTuple(ctx, checkpointer.Config{ThreadID: th}); err == nil && tup != nil {
					t.Errorf("%s stored after Forget(carol), by a process on a copy of the key table", th)
				}
			}
		})
	}
}

// TestReviewS25PlantedGuardOverload: with no schema configured (the data
// in the search path: every test here, and the usual deployment) the guard
// statement is `SELECT "memvault_erasure_fence"($1, $2)`, unqualified, its
// parameters of unknown type. PostgreSQL picks among every function of
// that name on the search path regardless of position when their argument
// types differ, and for unknown arguments prefers the string category
// (CVE-2018-1058's pattern): a function memvault_erasure_fence(text, text)
// created in ANY schema on the writer's search path — here one AFTER the
// data's schema; `public` on PostgreSQL 14 and older, where every role may
// create, by default — replaces the guard for every write, running as the
// application's role: a process on a copy of the key table writes carol
// after Forget(carol).
func TestReviewS25PlantedGuardOverload(t *testing.T) {
	ctx := context.Background()
	live, onCopy := carolThenCopy(t, true, false, false)
	pool, err := pgxpool.New(ctx, live.DSN)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	var data string
	if err := pool.QueryRow(ctx, `SELECT current_schema()`).Scan(&data); err != nil {
		t.Fatal(err)
	}
	planted := fmt.Sprintf("s25_planted_%d", time.Now().UnixNano())
	t.Cleanup(func() { _, _ = pool.Exec(context.Background(), `DROP SCHEMA IF EXISTS `+planted+` CASCADE`) })
	if _, err := pool.Exec(ctx, `CREATE SCHEMA `+planted+`;
CREATE FUNCTION `+planted+`.memvault_erasure_fence(p_subject text, p_known double precision) RETURNS void LANGUAGE plpgsql AS $$ BEGIN END $$`); err != nil {
		t.Fatal(err)
	}
	if onCopy.DSN, err = pgtest.WithSearchPath(onCopy.DSN, data, planted, "public"); err != nil {
		t.Fatal(err)
	}
	stale, err := Open(ctx, onCopy) // running before the erasure
	if err != nil {
		t.Fatal(err)
	}
	defer stale.Close()
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
			t.Errorf("a process on a copy of the key table, the data's schema first on its search path and a function "+
				"memvault_erasure_fence(text, double precision) in a schema after it: %s of carol after Forget(carol): %v, want keys.ErrSubjectErased", op, err)
		}
	}
}

// TestReviewS25ForgetLockTimeoutFailsClosed (PostgreSQL): a transaction of
// the application holding a write of carol open past Forget's 10 s wait
// for the guard's lock: Forget must fail before destroying a key (carol
// still reads), and a retry once the transaction ended must erase carol,
// the late write's rows included, and leave her readmittable and
// writable on the live key table.
func TestReviewS25ForgetLockTimeoutFailsClosed(t *testing.T) {
	ctx := context.Background()
	c := s23Config(t.TempDir())
	c.DSN = pgtest.SchemaDSN(t)
	c.KeyTable = fmt.Sprintf("keys_%d", time.Now().UnixNano())
	h, err := Open(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if _, err := putCarolS22(ctx, h, "carol:1", "carol's records"); err != nil {
		t.Fatal(err)
	}
	tx, err := h.Pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	saver := h.Saver.(*pgsaver.Saver)
	cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(0), ChannelValues: map[string]any{"notes": "late"},
		ChannelVersions: map[string]string{"notes": saver.NextVersion("")}}
	if _, err := saver.PutTx(ctx, tx, checkpointer.Config{ThreadID: "carol:2"}, cp, nil, cp.ChannelVersions); err != nil {
		t.Fatal(err)
	}
	_, ferr := h.Forget(ctx, "carol")
	if ferr == nil {
		t.Fatal("Forget(carol) returned success while a write of carol held the guard's lock")
	}
	if got, err := putCarolS22(ctx, h, "dave:1", "dave"); err != nil || got != "dave" {
		t.Fatalf("another subject after the timed-out Forget: %q, %v", got, err)
	}
	if tup, err := h.Saver.GetTuple(ctx, checkpointer.Config{ThreadID: "carol:1"}); err != nil || tup == nil {
		t.Fatalf("Forget(carol) timed out waiting (%v) and destroyed keys anyway: carol:1 reads %v, %v", ferr, tup, err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Forget(ctx, "carol"); err != nil {
		t.Fatalf("Forget(carol) again once the transaction ended: %v", err)
	}
	for _, th := range []string{"carol:1", "carol:2"} {
		if tup, err := h.Saver.GetTuple(ctx, checkpointer.Config{ThreadID: th}); err != nil || tup != nil {
			t.Errorf("after the retried Forget(carol): %s reads %v, %v", th, tup, err)
		}
	}
	if err := h.Readmit(ctx, "carol"); err != nil {
		t.Fatal(err)
	}
	if got, err := putCarolS22(ctx, h, "carol:3", "back"); err != nil || got != "back" {
		t.Fatalf("carol readmitted after a timed-out then retried Forget: %q, %v", got, err)
	}
}

// TestReviewS25MetadataModeGuardChecksThreadOwner: with subjects named by
// checkpoint metadata (MEMVAULT_SUBJECT_THREAD_METADATA, the ADK-style
// deployment) a thread's values are sealed under the thread's own keys,
// whose owner in the key table is keys.ThreadKeyOwner(thread), and the
// write's fence — the erasure guard included — names that owner, never
// the subject the thread is bound to. Forget(carol) records only
// erased_subject:carol. A process running on a copy of the key table
// (taken while chat-1 was bound to carol) writes carol's thread chat-1
// after Forget(carol), sealed under chat-1's key that only the copy
// still holds, and binds a new thread chat-2 to carol and writes it.
func TestReviewS25MetadataModeGuardChecksThreadOwner(t *testing.T) {
	for _, pg := range []bool{false, true} {
		t.Run(map[bool]string{false: "SQLite", true: "PostgreSQL"}[pg], func(t *testing.T) {
			ctx := context.Background()
			live, onCopy, makeCopy := guardConfigsOn(t, pg, false, false)
			for _, c := range []*config.Config{&live, &onCopy} {
				c.Subjects.ThreadSeparator, c.Subjects.ThreadMetadataKey = "", "user_id"
			}
			put := func(h *Handle, thread, notes string) error {
				cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(0), ChannelValues: map[string]any{"notes": notes},
					ChannelVersions: map[string]string{"notes": h.Saver.NextVersion("")}}
				_, err := h.Saver.Put(ctx, checkpointer.Config{ThreadID: thread}, cp, checkpointer.Metadata{"user_id": "carol"}, cp.ChannelVersions)
				return err
			}
			h, err := Open(ctx, live)
			if err != nil {
				t.Fatal(err)
			}
			if err := put(h, "chat-1", "carol takes insulin"); err != nil {
				t.Fatal(err)
			}
			h.Close()
			makeCopy()
			stale, err := Open(ctx, onCopy) // running before the erasure
			if err != nil {
				t.Fatal(err)
			}
			defer stale.Close()
			if h, err = Open(ctx, live); err != nil {
				t.Fatal(err)
			}
			r, err := h.Forget(ctx, "carol")
			if err != nil {
				t.Fatal(err)
			}
			h.Close()
			if r.Threads == 0 {
				t.Fatalf("control: Forget(carol) erased no thread: %+v", r)
			}

			var problems []string
			for _, th := range []string{"chat-1", "chat-2"} {
				err := put(stale, th, "carol takes insulin, after her erasure")
				if !errors.Is(err, keys.ErrSubjectErased) {
					problems = append(problems, fmt.Sprintf("put of %s (metadata user_id=carol): %v", th, err))
				}
			}
			writes := stale.Saver.PutWrites(ctx, checkpointer.Config{ThreadID: "chat-1", CheckpointID: checkpointer.NewID(0)},
				[]checkpointer.Write{{Channel: "notes", Value: "carol takes insulin"}}, "task-1", "")
			if !errors.Is(writes, keys.ErrSubjectErased) {
				problems = append(problems, fmt.Sprintf("put_writes of chat-1: %v", writes))
			}
			if len(problems) > 0 {
				t.Fatalf("subjects by metadata, a process on a copy of the key table after Forget(carol) (want keys.ErrSubjectErased): %s",
					strings.Join(problems, "; "))
			}
		})
	}
}

// TestReviewS25LiveProcessAfterReadmit: two processes on the LIVE key
// table; A wrote carol (her keys in its cache), B forgets and readmits
// carol. A's next writes of carol must succeed, at the latest on a retry.
// On SQLite the first write's Go check (keys.Hierarchy.LiveKey) finds the
// cached key destroyed, evicts carol and the retry seals under her new
// key. On PostgreSQL the refusal comes from SQL (the key fence, and the
// erasure guard alike: binding.FenceErr), which evicts nothing and reads
// no count again: A seals under carol's destroyed key, and is refused,
// until the key cache's minute runs out.
func TestReviewS25LiveProcessAfterReadmit(t *testing.T) {
	for _, pg := range []bool{false, true} {
		t.Run(map[bool]string{false: "SQLite", true: "PostgreSQL"}[pg], func(t *testing.T) {
			ctx := context.Background()
			c := s23Config(t.TempDir())
			if pg {
				c.DSN = pgtest.SchemaDSN(t)
				c.KeyTable = fmt.Sprintf("keys_%d", time.Now().UnixNano())
			}
			a, err := Open(ctx, c)
			if err != nil {
				t.Fatal(err)
			}
			defer a.Close()
			if _, err := putCarolS22(ctx, a, "carol:1", "carol's records"); err != nil {
				t.Fatal(err)
			}
			b, err := Open(ctx, c)
			if err != nil {
				t.Fatal(err)
			}
			defer b.Close()
			if _, err := b.Forget(ctx, "carol"); err != nil {
				t.Fatal(err)
			}
			if err := b.Readmit(ctx, "carol"); err != nil {
				t.Fatal(err)
			}
			if _, err := putCarolS22(ctx, b, "carol:2", "carol is back"); err != nil {
				t.Fatalf("B, carol readmitted: %v", err)
			}
			var errs []string
			for i := 3; i < 6; i++ {
				_, err := putCarolS22(ctx, a, fmt.Sprintf("carol:%d", i), "carol is back")
				if err == nil {
					return
				}
				errs = append(errs, err.Error())
			}
			t.Fatalf("A, a process on the live key table, after carol's Forget and Readmit by B: three puts of carol refused: %s",
				strings.Join(errs, " | "))
		})
	}
}

// TestReviewS25RepeatableReadTxOutlivesGuard (PostgreSQL): the guard
// function reads erased_subject:S in the caller's snapshot. In a
// REPEATABLE READ (or SERIALIZABLE) transaction — the caller's, through
// PutTx, or any transaction once default_transaction_isolation is set on
// the database or role — the snapshot is the transaction's first
// statement's: a transaction of a process on a copy of the key table that
// began before Forget(carol) recorded the erasure, and writes carol after
// Forget returned, finds no mark (and no lock held: MarkErasure's wait
// had nothing to wait for) and commits carol's rows, sealed under the key
// only the copy holds, after the erasure deleted hers. TestErasureWaitsForGuardedWrite
// covers READ COMMITTED only.
func TestReviewS25RepeatableReadTxOutlivesGuard(t *testing.T) {
	ctx := context.Background()
	live, onCopy := carolThenCopy(t, true, false, false)
	stale, err := Open(ctx, onCopy)
	if err != nil {
		t.Fatal(err)
	}
	defer stale.Close()
	tx, err := stale.Pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead})
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, `SELECT 1`); err != nil { // the transaction's snapshot
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
		tup, _ := stale.Saver.GetTuple(ctx, checkpointer.Config{ThreadID: "carol:2"})
		var notes any
		if tup != nil {
			notes = tup.Checkpoint.ChannelValues["notes"]
		}
		t.Fatalf("a REPEATABLE READ transaction of a process on a copy of the key table, begun before Forget(carol), wrote carol:2 after "+
			"Forget returned (put: %v, commit: %v): %d checkpoint rows stay, reading %q through the copy", perr, cerr, n, notes)
	}
}

// TestReviewS25MarkNotANumber: erased_subject:carol altered to a value
// that is not a decimal count (a hand edit, a restore through a tool that
// reformats numbers: "1.0", "+1", " 1"). PostgreSQL's guard casts with
// ::bigint and fails every write of carol (closed); SQLite's casts with
// CAST(value AS INTEGER), which reads a text that is not an integer as
// its longest integer prefix, 0 when there is none: "one" lets the
// process on a copy of the key table write carol (open).
func TestReviewS25MarkNotANumber(t *testing.T) {
	for _, pg := range []bool{false, true} {
		t.Run(map[bool]string{false: "SQLite", true: "PostgreSQL"}[pg], func(t *testing.T) {
			ctx := context.Background()
			live, onCopy := carolThenCopy(t, pg, false, false)
			stale, err := Open(ctx, onCopy)
			if err != nil {
				t.Fatal(err)
			}
			defer stale.Close()
			h, err := Open(ctx, live)
			if err != nil {
				t.Fatal(err)
			}
			defer h.Close()
			if _, err := h.Forget(ctx, "carol"); err != nil {
				t.Fatal(err)
			}
			const edit = `UPDATE memvault_meta SET value = 'one' WHERE name = 'erased_subject:carol'`
			if pg {
				if _, err := h.Pool.Exec(ctx, edit); err != nil {
					t.Fatal(err)
				}
			} else if _, err := openRaw(t, live.DBPath).Exec(edit); err != nil {
				t.Fatal(err)
			}
			for op, err := range carolWrites(ctx, stale, 2) {
				if err == nil {
					t.Errorf("erased_subject:carol = 'one': the process on a copy of the key table, %s of carol: stored", op)
				}
			}
		})
	}
}

// TestReviewS25PlantedMarkBlocksForget (PostgreSQL): one row written to
// the data database's memvault_meta — erased_subject:carol holding a text
// that is not a bigint ('x', or a number past its range) — before carol's
// erasure makes every Forget(carol) fail: AdvanceMark's ON CONFLICT …
// WHERE value::bigint < … raises, claimErasure fails, no key is
// destroyed. Whoever can write only the data database can keep a data
// subject from being erased (the session 24 reviews refused that for the
// intent rows: TestReviewS24bOutOfRangeIntentRowBreaksForget).
func TestReviewS25PlantedMarkBlocksForget(t *testing.T) {
	for _, v := range []string{"x", "99999999999999999999"} {
		t.Run(v, func(t *testing.T) {
			ctx := context.Background()
			c := s23Config(t.TempDir())
			c.DSN = pgtest.SchemaDSN(t)
			c.KeyTable = fmt.Sprintf("keys_%d", time.Now().UnixNano())
			h, err := Open(ctx, c)
			if err != nil {
				t.Fatal(err)
			}
			defer h.Close()
			if _, err := putCarolS22(ctx, h, "carol:1", "carol's records"); err != nil {
				t.Fatal(err)
			}
			if _, err := h.Pool.Exec(ctx, `INSERT INTO memvault_meta (name, value) VALUES ('erased_subject:carol', $1)`, v); err != nil {
				t.Fatal(err)
			}
			if _, err := h.Forget(ctx, "carol"); err != nil {
				t.Fatalf("erased_subject:carol planted as %q: Forget(carol): %v", v, err)
			}
		})
	}
}

// TestReviewS25CopyCatchesUpAfterKilledForget: TestReviewS25CopyCatchesUpByForgetting
// with the live Forget(carol) killed after its key transaction (carol's
// keys destroyed in the live table, the database's count not yet moved:
// the window ForgetWith's comment names). Then even a claim that refused
// a key table counting fewer erasures than the database has seen would
// not catch the copy: both count K. The copy's Forget(dave) skips number
// K+1 (carol's intent, not done) and takes K+2, and its count reaches K+1
// = erased_subject:carol: the copy writes carol again. A fix must not let
// a claim skip an intent it did not finish.
func TestReviewS25CopyCatchesUpAfterKilledForget(t *testing.T) {
	for _, pg := range []bool{false, true} {
		t.Run(map[bool]string{false: "SQLite", true: "PostgreSQL"}[pg], func(t *testing.T) {
			ctx := context.Background()
			live, onCopy := carolThenCopy(t, pg, false, false)
			stale, err := Open(ctx, onCopy) // running before the erasure
			if err != nil {
				t.Fatal(err)
			}
			defer stale.Close()
			if _, err := putCarolS22(ctx, stale, "dave:1", "dave is fine"); err != nil {
				t.Fatal(err)
			}
			worker, err := Open(ctx, live)
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

			_, ferr := stale.Forget(ctx, "dave")
			_, _ = putCarolS22(ctx, stale, "erin:1", "erin is fine") // keys read: the guard's count read again
			var problems []string
			for op, err := range carolWrites(ctx, stale, 3) {
				if err == nil {
					problems = append(problems, fmt.Sprintf("%s of carol succeeded", op))
				}
			}
			if len(problems) > 0 {
				t.Fatalf("a process on a copy of the key table, after a Forget(carol) killed past its key transaction on the live table and "+
					"its own Forget(dave) (%v): %s", ferr, strings.Join(problems, "; "))
			}
		})
	}
}
