package vault

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/memvault/memvault/audit"
	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/config"
	"github.com/memvault/memvault/keys"
	"github.com/memvault/memvault/memvaulttest/pgtest"
	"github.com/memvault/memvault/store"
)

// TestReviewS27RefusedForgetRecordsNoErasure (session 27 review): a Forget
// refused with ErrErasureLocked "claimed and changed nothing" (README,
// ForgetOptions.LockWait), yet its subject.erase record is already in the
// audit trail: ForgetWith logs before it takes the erasure lock. An
// auditor reading the trail sees carol erased (once per refused retry)
// while every row of carol is readable under live keys.
func TestReviewS27RefusedForgetRecordsNoErasure(t *testing.T) {
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
			if _, err := putCarolS22(ctx, h, "carol:1", "carol notes"); err != nil {
				t.Fatal(err)
			}
			held, err := h.forgetLock().lock(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer held.release()
			for _, wait := range []time.Duration{-1, 50 * time.Millisecond} {
				if _, err := h.ForgetWith(ctx, "carol", ForgetOptions{LockWait: wait}); !errors.Is(err, ErrErasureLocked) {
					t.Fatalf("Forget while the lock is held: %v; want ErrErasureLocked", err)
				}
			}
			if n := subjectErasures(t, h, "carol"); n != 0 {
				t.Errorf("the audit trail holds %d subject.erase records of carol after two Forgets refused with ErrErasureLocked "+
					"(\"claimed and changed nothing\"); carol:1 is still readable; want 0", n)
			}
		})
	}
}

// hostileThreads are thread ids of subject carol with bytes that break
// careless SQL (LIKE wildcards, escapes, quotes) or text handling.
func hostileThreads(pg bool) []string {
	ids := []string{"carol:%", "carol:_", `carol:\`, "carol:'; --", "carol:" + strings.Repeat("x", 500), "carol:é", "carol:"}
	if !pg {
		// PostgreSQL text holds neither.
		ids = append(ids, "carol:\x00nul", "carol:\xff\xfe")
	}
	return ids
}

// TestReviewS27ForgetCompleteness: every thread of carol holding any row
// — checkpoints in several namespaces, only pending writes, hostile ids,
// and enough other threads that carol's straddle RowThreadIDs' page of
// 1000 (exactly a page, a page + 1) — is gone after Forget, and the other
// subjects' threads all stay.
func TestReviewS27ForgetCompleteness(t *testing.T) {
	ctx := context.Background()
	for _, backend := range []string{"sqlite", "postgres", "citus"} {
		t.Run(backend, func(t *testing.T) {
			pg := backend != "sqlite"
			c := subjectsConfigOn(t, pg)
			if backend == "citus" {
				c.DSN = pgtest.CitusSchemaDSN(t)
			}
			h, err := Open(ctx, c)
			if err != nil {
				t.Fatal(err)
			}
			defer h.Close()
			var carol []string
			tryPut := func(thread, ns string) error {
				cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(0), ChannelValues: map[string]any{"notes": "n " + thread},
					ChannelVersions: map[string]string{"notes": h.Saver.NextVersion("")}}
				_, err := h.Saver.Put(ctx, checkpointer.Config{ThreadID: thread, CheckpointNS: ns}, cp, nil, cp.ChannelVersions)
				return err
			}
			put := func(thread, ns string) {
				t.Helper()
				if err := tryPut(thread, ns); err != nil {
					t.Fatalf("put %.40q: %v", thread, err)
				}
			}
			// 999 threads of others sorted before carol's ("alice:…"),
			// so that carol's first threads fall on ids 1000 and 1001
			// of the listing.
			for i := range 999 {
				put(fmt.Sprintf("alice:%04d", i), "")
			}
			for _, th := range hostileThreads(pg) {
				if err := tryPut(th, ""); err != nil {
					// A clear refusal holds too: nothing stored.
					t.Logf("put %.40q refused: %v", th, err)
					continue
				}
				carol = append(carol, th)
			}
			put("carol:ns", "")
			put("carol:ns", "sub:1")
			put("carol:ns2", "only|nested")
			carol = append(carol, "carol:ns", "carol:ns2")
			cfg := checkpointer.Config{ThreadID: "carol:w", CheckpointID: checkpointer.NewID(0)}
			if err := h.Saver.PutWrites(ctx, cfg, []checkpointer.Write{{Channel: "notes", Value: "pending"}}, "task-1", ""); err != nil {
				t.Fatal(err)
			}
			cfg = checkpointer.Config{ThreadID: "carol:wns", CheckpointNS: "sub:2", CheckpointID: checkpointer.NewID(0)}
			if err := h.Saver.PutWrites(ctx, cfg, []checkpointer.Write{{Channel: "notes", Value: "pending"}}, "task-1", ""); err != nil {
				t.Fatal(err)
			}
			carol = append(carol, "carol:w", "carol:wns")
			for i := range 3 {
				put(fmt.Sprintf("dave:%d", i), "")
			}
			r, err := h.Forget(ctx, "carol")
			if err != nil {
				t.Fatal(err)
			}
			if r.Threads != len(carol) {
				t.Errorf("receipt counts %d threads, %d of carol stored", r.Threads, len(carol))
			}
			left := map[string]int{}
			for _, table := range []string{"checkpoints", "checkpoint_blobs", "checkpoint_writes"} {
				q := `SELECT thread_id FROM ` + table
				var ids []string
				if h.Pool != nil {
					rows, err := h.Pool.Query(ctx, q)
					if err != nil {
						t.Fatal(err)
					}
					for rows.Next() {
						var s string
						if err := rows.Scan(&s); err != nil {
							t.Fatal(err)
						}
						ids = append(ids, s)
					}
					if err := rows.Err(); err != nil {
						t.Fatal(err)
					}
				} else {
					db := openRaw(t, c.DBPath)
					rows, err := db.QueryContext(ctx, q)
					if err != nil {
						t.Fatal(err)
					}
					for rows.Next() {
						var s string
						if err := rows.Scan(&s); err != nil {
							t.Fatal(err)
						}
						ids = append(ids, s)
					}
					rows.Close()
				}
				for _, id := range ids {
					left[id]++
				}
			}
			var carolLeft []string
			others := map[string]bool{}
			for id := range left {
				if strings.HasPrefix(id, "carol:") {
					carolLeft = append(carolLeft, fmt.Sprintf("%.40q", id))
				} else {
					others[id] = true
				}
			}
			if len(carolLeft) > 0 {
				t.Errorf("rows of carol's threads stay after Forget(carol): %v", carolLeft)
			}
			if len(others) != 999+3 {
				t.Errorf("%d other threads stay, want %d", len(others), 999+3)
			}
		})
	}
}

// TestReviewS27RefusedForgetLeavesNoWaitingSession (session 27 review,
// holds): on PostgreSQL a Forget that gives up waiting for the erasure lock
// (ForgetOptions.LockWait) only closes its socket — pgx's default context
// handler sets a deadline, it sends no cancel request. Were the backend
// left waiting in pg_advisory_lock, every refused retry (a cron retrying
// with --lock-wait) would cost the server a connection until the holder
// ends. It is not: the server ends the waiting backend.
func TestReviewS27RefusedForgetLeavesNoWaitingSession(t *testing.T) {
	ctx := context.Background()
	c := subjectsConfigOn(t, true)
	h, err := Open(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if _, err := putCarolS22(ctx, h, "carol:1", "carol notes"); err != nil {
		t.Fatal(err)
	}
	held, err := h.forgetLock().lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer held.release()
	const retries = 3
	for range retries {
		if _, err := h.ForgetWith(ctx, "carol", ForgetOptions{LockWait: 100 * time.Millisecond}); !errors.Is(err, ErrErasureLocked) {
			t.Fatalf("Forget while the lock is held: %v; want ErrErasureLocked", err)
		}
	}
	// Waiting backends of this database, polled for up to 30 s: a refused
	// Forget's session should be gone once its error is returned, though
	// its end (the server noticing the closed socket and ending the
	// backend) may take a loaded server a while; the holder keeps
	// the lock throughout, so a session left waiting on it stays counted.
	var waiting int
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); {
		if err := h.Pool.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity
			WHERE datname = current_database() AND wait_event_type = 'Lock' AND wait_event = 'advisory'`).Scan(&waiting); err != nil {
			t.Fatal(err)
		}
		if waiting == 0 {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if waiting != 0 {
		t.Errorf("%d server sessions still wait on the erasure lock 30 s after %d Forgets gave up waiting (ErrErasureLocked): "+
			"each refused retry holds a connection until the holder ends", waiting, retries)
	}
}

// carolRows counts the rows of threads "carol:…" in the checkpoint
// tables of h's database.
func carolRows(t *testing.T, h *Handle, c config.Config) int {
	t.Helper()
	ctx := context.Background()
	n := 0
	for _, table := range []string{"checkpoints", "checkpoint_blobs", "checkpoint_writes"} {
		q := `SELECT count(*) FROM ` + table + ` WHERE substr(thread_id, 1, 6) = 'carol:'`
		var k int
		var err error
		if h.Pool != nil {
			err = h.Pool.QueryRow(ctx, q).Scan(&k)
		} else {
			err = openRaw(t, c.DBPath).QueryRowContext(ctx, q).Scan(&k)
		}
		if err != nil {
			t.Fatal(err)
		}
		n += k
	}
	return n
}

// TestReviewS27ForgetSameSubjectTwiceWithWriter: two handles of one
// database (as two processes) forget carol at once while a third writes
// new threads of carol in a loop. Both Forgets end without error, no row
// of carol stays once they returned, every write after that is refused,
// and a later Open has nothing to finish.
func TestReviewS27ForgetSameSubjectTwiceWithWriter(t *testing.T) {
	ctx := context.Background()
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			c := subjectsConfigOn(t, backend == "postgres")
			hs := make([]*Handle, 3)
			for i := range hs {
				h, err := Open(ctx, c)
				if err != nil {
					t.Fatal(err)
				}
				defer h.Close()
				hs[i] = h
			}
			for i := range 5 {
				if _, err := putCarolS22(ctx, hs[0], fmt.Sprintf("carol:%d", i), "notes"); err != nil {
					t.Fatal(err)
				}
			}
			stop := make(chan struct{})
			type result struct {
				ok, refused int
				other       error
			}
			wrote, started := make(chan result, 1), make(chan struct{})
			go func() {
				var r result
				for i := 0; ; i++ {
					select {
					case <-stop:
						wrote <- r
						return
					default:
					}
					_, err := putCarolS22(ctx, hs[2], fmt.Sprintf("carol:w%d", i), "written during forget")
					switch {
					case err == nil:
						r.ok++
						if r.ok == 3 {
							close(started)
						}
					case errors.Is(err, keys.ErrSubjectErased):
						r.refused++
					default:
						if r.other == nil {
							r.other = err
						}
						r.refused++
					}
				}
			}()
			<-started // the writer is writing carol's threads
			errs := make(chan error, 2)
			for _, h := range hs[:2] {
				go func() { _, err := h.ForgetWith(ctx, "carol", ForgetOptions{Wait: time.Minute}); errs <- err }()
			}
			for range 2 {
				if err := <-errs; err != nil {
					t.Errorf("a Forget(carol) of two at once: %v", err)
				}
			}
			close(stop)
			r := <-wrote
			t.Logf("writer during the forgets: %d writes stored, %d refused (first other error: %v)", r.ok, r.refused, r.other)
			if n := carolRows(t, hs[0], c); n != 0 {
				t.Errorf("%d rows of carol stay after two Forget(carol) returned, with a writer of carol running meanwhile", n)
			}
			if _, err := putCarolS22(ctx, hs[2], "carol:late", "after"); !errors.Is(err, keys.ErrSubjectErased) {
				t.Errorf("a write of carol after Forget returned: %v; want keys.ErrSubjectErased", err)
			}
			h, err := Open(ctx, c)
			if err != nil {
				t.Fatal(err)
			}
			defer h.Close()
			if len(h.Warnings) != 0 {
				t.Errorf("Open after the forgets warns: %q", h.Warnings)
			}
		})
	}
}

// TestReviewS27ReadersWriterAndVerify: audited readers (some with
// deadlines that expire mid-read), a writer, and a second handle (as
// another process) checking the trail, all at once. Every check while
// they run finds the trail whole; once they stop, every read that
// returned a tuple has its record, and no thread has more read records
// than reads were started.
func TestReviewS27ReadersWriterAndVerify(t *testing.T) {
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
			v, err := Open(ctx, c)
			if err != nil {
				t.Fatal(err)
			}
			defer v.Close()
			const readers = 6
			for i := range readers {
				if _, err := putCarolS22(ctx, h, fmt.Sprintf("carol:r%d", i), "notes"); err != nil {
					t.Fatal(err)
				}
			}
			type tally struct{ started, ok int }
			tallies := make([]tally, readers)
			stop := make(chan struct{})
			var wg sync.WaitGroup
			for i := range readers {
				wg.Go(func() {
					th := fmt.Sprintf("carol:r%d", i)
					for n := 0; ; n++ {
						select {
						case <-stop:
							return
						default:
						}
						rctx, cancel := context.WithTimeout(ctx, time.Duration(n%7)*300*time.Microsecond+time.Duration(n%2)*time.Second)
						tallies[i].started++
						tup, err := h.Saver.GetTuple(rctx, checkpointer.Config{ThreadID: th})
						cancel()
						if err == nil && tup != nil {
							tallies[i].ok++
						}
						if err != nil && tup != nil {
							t.Errorf("GetTuple returned a tuple and an error: %v", err)
						}
					}
				})
			}
			wg.Go(func() {
				for n := 0; ; n++ {
					select {
					case <-stop:
						return
					default:
					}
					if _, err := putCarolS22(ctx, h, fmt.Sprintf("carol:w%d", n%20), "w"); err != nil {
						t.Errorf("writer: %v", err)
						return
					}
				}
			})
			checks := 0
			deadline := time.Now().Add(3 * time.Second)
			for time.Now().Before(deadline) {
				if _, err := v.Audit.Check(ctx, nil); err != nil {
					t.Errorf("audit check while readers and a writer run: %v", err)
					break
				}
				checks++
			}
			close(stop)
			wg.Wait()
			if err := h.Audit.Flush(ctx); err != nil {
				t.Fatal(err)
			}
			if _, err := v.Audit.Verify(ctx); err != nil {
				t.Fatalf("verify after: %v", err)
			}
			recs := map[string]int{}
			if err := v.Audit.Records(ctx, audit.Filter{}, func(r audit.Record) error {
				if r.Op == audit.OpCheckpointRead {
					recs[r.Target]++
				}
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			oks := 0
			for i, tl := range tallies {
				th := fmt.Sprintf("carol:r%d", i)
				oks += tl.ok
				// +1: putCarolS22's read back at the start.
				if recs[th] < tl.ok+1 || recs[th] > tl.started+1 {
					t.Errorf("%s: %d reads started, %d returned a tuple, %d read records", th, tl.started, tl.ok, recs[th])
				}
			}
			t.Logf("%d checks, %d acknowledged reads", checks, oks)
		})
	}
}

// TestReviewS27ForgetWithItemWriter: a handle (as another process) puts
// carol's store items, and pending writes of a new thread of carol, in a
// loop while another forgets carol. Once Forget returned no item or row
// of carol stays, and carol's next item put is refused.
func TestReviewS27ForgetWithItemWriter(t *testing.T) {
	ctx := context.Background()
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			c := subjectsConfigOn(t, backend == "postgres")
			f, err := Open(ctx, c)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			w, err := Open(ctx, c)
			if err != nil {
				t.Fatal(err)
			}
			defer w.Close()
			ns := store.Namespace{"users", "carol", "prefs"}
			stop, started, done := make(chan struct{}), make(chan struct{}), make(chan int, 1)
			go func() {
				ok := 0
				for i := 0; ; i++ {
					select {
					case <-stop:
						done <- ok
						return
					default:
					}
					err := w.Store.Put(ctx, ns, fmt.Sprintf("k%d", i), map[string]any{"diet": "secret"})
					cfg := checkpointer.Config{ThreadID: fmt.Sprintf("carol:pw%d", i), CheckpointID: checkpointer.NewID(0)}
					werr := w.Saver.PutWrites(ctx, cfg, []checkpointer.Write{{Channel: "notes", Value: "pending"}}, "task-1", "")
					if err == nil && werr == nil {
						ok++
						if ok == 3 {
							close(started)
						}
					}
				}
			}()
			<-started
			if _, err := f.ForgetWith(ctx, "carol", ForgetOptions{Wait: time.Minute}); err != nil {
				t.Fatal(err)
			}
			close(stop)
			t.Logf("items and pending writes stored by the writer: %d", <-done)
			q := `SELECT count(*) FROM store WHERE substr(prefix, 1, 11) = 'users.carol'`
			var n int
			if f.Pool != nil {
				err = f.Pool.QueryRow(ctx, q).Scan(&n)
			} else {
				err = openRaw(t, c.DBPath).QueryRowContext(ctx, q).Scan(&n)
			}
			if err != nil {
				t.Fatal(err)
			}
			if n != 0 {
				t.Errorf("%d items of carol stay after Forget(carol) returned", n)
			}
			if k := carolRows(t, f, c); k != 0 {
				t.Errorf("%d checkpoint rows of carol stay after Forget(carol) returned", k)
			}
			if err := w.Store.Put(ctx, ns, "late", map[string]any{"diet": "x"}); !errors.Is(err, keys.ErrSubjectErased) {
				t.Errorf("an item put of carol after Forget returned: %v; want keys.ErrSubjectErased", err)
			}
		})
	}
}

// TestReviewS27HostileSubjectForgetsNoOneElse: Forget of a subject name
// made of separators, wildcards or carol's name plus a label is refused
// or erases only that name: carol's thread and items stay readable.
func TestReviewS27HostileSubjectForgetsNoOneElse(t *testing.T) {
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
			ns := store.Namespace{"users", "carol", "x"}
			if err := h.Store.Put(ctx, ns, "diet", map[string]any{"v": "vegan"}); err != nil {
				t.Fatal(err)
			}
			for _, s := range []string{"", "carol.x", "carol:1", "*", "%", "_arol", "carol\x00", "carol ", "Carol", ".", "users"} {
				_, err := h.Forget(ctx, s)
				t.Logf("Forget(%q): %v", s, err)
				tup, terr := h.Saver.GetTuple(ctx, checkpointer.Config{ThreadID: "carol:1"})
				it, ierr := h.Store.Get(ctx, ns, "diet")
				if terr != nil || tup == nil || ierr != nil || it == nil {
					t.Fatalf("after Forget(%q) (%v): carol:1 %v, %v; carol's item %v, %v", s, err, tup, terr, it, ierr)
				}
			}
		})
	}
}

// TestReviewS27ForgetEmailSubject (session 27 review): a subject named by
// the thread ids (MEMVAULT_SUBJECT_THREAD_SEPARATOR) may hold a '.' — an
// e-mail address, "alice@example.com:visit-1" — and gets keys and writes
// as any other. Forget destroys its keys and deletes its threads, then
// deletes its items under "users.alice@example.com", a namespace the
// store refuses ("label … contains '.'"): every run fails there, so the
// erasure never finishes and no receipt is ever issued.
func TestReviewS27ForgetEmailSubject(t *testing.T) {
	ctx := context.Background()
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			h, err := Open(ctx, subjectsConfigOn(t, backend == "postgres"))
			if err != nil {
				t.Fatal(err)
			}
			defer h.Close()
			const subject = "alice@example.com"
			if got, err := putCarolS22(ctx, h, subject+":visit-1", "alice notes"); err != nil || got != "alice notes" {
				t.Fatalf("a thread of %s: %q, %v", subject, got, err)
			}
			for run := range 2 {
				if r, err := h.Forget(ctx, subject); err != nil || r.Pending {
					t.Errorf("Forget(%q), run %d: pending %v, %v", subject, run+1, r.Pending, err)
				}
			}
			// Once erased, the subject can be let back and write again.
			if err := h.Readmit(ctx, subject); err != nil {
				t.Errorf("Readmit(%q) after its Forgets: %v", subject, err)
			} else if got, err := putCarolS22(ctx, h, subject+":visit-2", "back"); err != nil || got != "back" {
				t.Errorf("%s readmitted writes: %q, %v", subject, got, err)
			}
		})
	}
}

// TestReviewS27ForgetWaitNegative (session 27 review): ForgetOptions.Wait
// negative means "do not wait for readers that may still hold a copy of
// the destroyed keys" (keys.PurgeOptions). It also sets the deadline of
// drainWrites, already past, so on SQLite every such Forget fails at
// "drain writes: context deadline exceeded" after destroying the keys and
// before deleting any row — with no writer and no reader at all — and a
// rerun with the same options fails the same way: the rows stay.
func TestReviewS27ForgetWaitNegative(t *testing.T) {
	ctx := context.Background()
	h, err := Open(ctx, subjectsConfigOn(t, false))
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if _, err := putCarolS22(ctx, h, "carol:1", "carol notes"); err != nil {
		t.Fatal(err)
	}
	for run := range 2 {
		r, err := h.ForgetWith(ctx, "carol", ForgetOptions{Wait: -1})
		if err != nil {
			t.Errorf("Forget(carol) with Wait -1 (no writer, no reader), run %d: %v (receipt threads %d, pending %v)", run+1, err, r.Threads, r.Pending)
		}
	}
	if n := carolRows(t, h, subjectsConfigOnPath(h)); n != 0 {
		t.Errorf("%d rows of carol stay after two Forget(carol) with Wait -1", n)
	}
}

// subjectsConfigOnPath is a config naming h's SQLite file (carolRows
// opens it).
func subjectsConfigOnPath(h *Handle) config.Config {
	var c config.Config
	c.DBPath = h.dbPath
	return c
}

// TestReviewS27SQLiteReadWhileTrailLocked: another process holds a write
// transaction on the SQLite trail file (<db>.audit), so no record can
// commit. Audited reads — GetTuple, List, an item Get, Search — return
// no data, only an error, until it ends; then they read, and the trail
// verifies with no gap.
func TestReviewS27SQLiteReadWhileTrailLocked(t *testing.T) {
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
	ns := store.Namespace{"users", "carol"}
	if err := h.Store.Put(ctx, ns, "diet", map[string]any{"v": "vegan"}); err != nil {
		t.Fatal(err)
	}
	if err := h.Audit.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	conn, err := openRaw(t, c.DBPath+".audit").Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, `BEGIN IMMEDIATE`); err != nil {
		t.Fatal(err)
	}
	// Each read's own guard (not a figure of speed): a read must fail
	// because its record cannot commit, not because an earlier one spent
	// the deadline.
	guard := func() context.Context {
		g, cancel := context.WithTimeout(ctx, time.Second)
		t.Cleanup(cancel)
		return g
	}
	if tup, err := h.Saver.GetTuple(guard(), checkpointer.Config{ThreadID: "carol:1"}); err == nil || tup != nil {
		t.Errorf("GetTuple while no record can commit: %v, %v; want no tuple and an error", tup, err)
	}
	for tup, err := range h.Saver.List(guard(), &checkpointer.Config{ThreadID: "carol:1"}, checkpointer.ListOptions{}) {
		if tup != nil || err == nil {
			t.Errorf("List while no record can commit yielded %v, %v; want only an error", tup, err)
		}
	}
	if it, err := h.Store.Get(guard(), ns, "diet"); err == nil || it != nil {
		t.Errorf("item Get while no record can commit: %v, %v; want no item and an error", it, err)
	}
	if its, err := h.Store.Search(guard(), ns, store.SearchOptions{Limit: 5}); err == nil || len(its) != 0 {
		t.Errorf("Search while no record can commit: %d items, %v; want none and an error", len(its), err)
	}
	if _, err := conn.ExecContext(ctx, `ROLLBACK`); err != nil {
		t.Fatal(err)
	}
	if got, err := h.Saver.GetTuple(ctx, checkpointer.Config{ThreadID: "carol:1"}); err != nil || got == nil {
		t.Fatalf("GetTuple once the trail is free: %v, %v", got, err)
	}
	if err := h.Audit.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Audit.Verify(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestReviewS27SpanningReadsNameNoSubject (session 27 review): `audit
// show --subject carol` is how an operator answers "who read carol's
// data". A Search whose prefix spans subjects ("users") returns carol's
// items, and a List of all threads returns carol's checkpoints, yet their
// records name no subject (the prefix "users", the thread "*"), so
// neither read appears under carol.
func TestReviewS27SpanningReadsNameNoSubject(t *testing.T) {
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
	if err := h.Store.Put(ctx, store.Namespace{"users", "carol"}, "diet", map[string]any{"v": "vegan"}); err != nil {
		t.Fatal(err)
	}
	its, err := h.Store.Search(ctx, store.Namespace{"users"}, store.SearchOptions{Limit: 10})
	if err != nil || len(its) != 1 {
		t.Fatalf("Search(users): %d items, %v", len(its), err)
	}
	listed := 0
	for tup, err := range h.Saver.List(ctx, nil, checkpointer.ListOptions{AllThreads: true}) {
		if err != nil {
			t.Fatal(err)
		}
		if tup.Config.ThreadID == "carol:1" {
			listed++
		}
	}
	if listed == 0 {
		t.Fatal("List of all threads did not return carol:1")
	}
	// A search that returns only dave's items is no read of carol's.
	if err := h.Store.Put(ctx, store.Namespace{"users", "dave"}, "diet", map[string]any{"v": "keto"}); err != nil {
		t.Fatal(err)
	}
	if its, err := h.Store.Search(ctx, store.Namespace{"users"}, store.SearchOptions{Filter: map[string]any{"v": "keto"}, Limit: 10}); err != nil || len(its) != 1 {
		t.Fatalf("Search(users, keto): %d items, %v", len(its), err)
	}
	// What `audit show --subject carol` prints.
	var searches, lists, dave int
	if err := h.Audit.Records(ctx, audit.Filter{Subject: "carol"}, func(r audit.Record) error {
		switch {
		case r.Op == audit.OpItemSearch && r.Subject == "carol" && r.Target == "users":
			searches++
		case r.Op == audit.OpCheckpointList && r.Target == "*":
			lists++
		case r.Subject != "carol":
			dave++
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if searches != 1 {
		t.Errorf("a Search over users returned carol's item once; %d item.search records of it are listed under subject carol", searches)
	}
	if lists == 0 {
		t.Errorf("a List of all threads returned carol:1; no record of it is listed under subject carol")
	}
	if dave != 0 {
		t.Errorf("%d records of no read of carol's data are listed under subject carol", dave)
	}
}
