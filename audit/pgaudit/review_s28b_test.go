package pgaudit_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/memvault/memvault/audit"
	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/checkpointer/pgsaver"
	"github.com/memvault/memvault/memvaulttest/pgtest"
)

// s28bPut stores one checkpoint on thread through the unaudited saver.
func s28bPut(t *testing.T, inner checkpointer.Saver, thread string) *checkpointer.Checkpoint {
	t.Helper()
	cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(1), ChannelValues: map[string]any{"a": "1"}, ChannelVersions: map[string]string{"a": "1"}}
	if _, err := inner.Put(t.Context(), checkpointer.Config{ThreadID: thread}, cp, checkpointer.Metadata{}, map[string]string{"a": "1"}); err != nil {
		t.Fatal(err)
	}
	return cp
}

// s28bReads runs the three lone reads (GetTuple latest, by id, List(10))
// and returns how many returned data and how many failed.
func s28bReads(ctx context.Context, s checkpointer.Saver, thread, id string) (data, failed int) {
	for _, cfg := range []checkpointer.Config{{ThreadID: thread}, {ThreadID: thread, CheckpointID: id}} {
		tp, err := s.GetTuple(ctx, cfg)
		if tp != nil {
			data++
		}
		if err != nil {
			failed++
		}
	}
	var got, errs int
	for tp, err := range s.List(ctx, &checkpointer.Config{ThreadID: thread}, checkpointer.ListOptions{Limit: 10}) {
		if tp != nil {
			got++
		}
		if err != nil {
			errs++
		}
	}
	if got > 0 {
		data++
	}
	if errs > 0 {
		failed++
	}
	return data, failed
}

func s28bPending(t *testing.T, pool *pgxpool.Pool, target string) int {
	t.Helper()
	var n int
	if err := pool.QueryRow(t.Context(), `SELECT count(*) FROM memvault_audit_pending WHERE target = $1`, target).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestS28bReadRecordFailingAtCommit: a record whose insert succeeds in
// the statement but whose commit fails (a deferred constraint trigger on
// the pending table raises at COMMIT, after the server sent every row and
// CommandComplete) must fail the read: the rows went out, the record did
// not commit.
func TestS28bReadRecordFailingAtCommit(t *testing.T) {
	pool := pgtest.Pool(t)
	e := inTx(t, pool)
	ctx := t.Context()
	cp := s28bPut(t, e.Inner, "late")
	for _, sql := range []string{
		`CREATE FUNCTION s28b_refuse() RETURNS trigger LANGUAGE plpgsql AS $$BEGIN IF NEW.target = 'late' THEN RAISE EXCEPTION 's28b: refused at commit'; END IF; RETURN NULL; END$$`,
		`CREATE CONSTRAINT TRIGGER s28b_refuse_t AFTER INSERT ON memvault_audit_pending DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION s28b_refuse()`,
	} {
		if _, err := pool.Exec(ctx, sql); err != nil {
			t.Fatal(err)
		}
	}
	data, failed := s28bReads(ctx, e.Saver, "late", cp.ID)
	if data != 0 || failed != 3 {
		t.Fatalf("reads whose record failed at commit: %d returned data, %d failed; want 0 and 3", data, failed)
	}
	if n := s28bPending(t, pool, "late"); n != 0 {
		t.Fatalf("%d pending records of refused reads", n)
	}
	if _, err := e.Trail.Verify(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestS28bReadOnlyConnection: on connections whose transactions are read
// only (default_transaction_read_only, as on a hot standby), an audited
// lone read cannot insert its record: it must fail, not read unrecorded.
func TestS28bReadOnlyConnection(t *testing.T) {
	pool := pgtest.Pool(t)
	e := inTx(t, pool)
	ctx := t.Context()
	cp := s28bPut(t, e.Inner, "ro")
	cfg := pool.Config().Copy()
	cfg.ConnConfig.RuntimeParams["default_transaction_read_only"] = "on"
	ro, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	inner, err := pgsaver.New(ro, pgsaver.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s := audit.NewSaver(inner, e.Trail, nil)
	data, failed := s28bReads(ctx, s, "ro", cp.ID)
	if data != 0 || failed != 3 {
		t.Fatalf("reads on read-only connections: %d returned data, %d failed; want 0 and 3", data, failed)
	}
	if n := s28bPending(t, pool, "ro"); n != 0 {
		t.Fatalf("%d pending records of failed reads", n)
	}
}

// TestS28bReadKilledBeforeCommit: the read's backend is terminated
// (pg_terminate_backend from another connection) while its record's
// insert runs (a statement with a data-modifying CTE is run to its end
// before its rows go out: PORTAL_ONE_MOD_WITH). The read must fail, and
// no record may be left.
func TestS28bReadKilledBeforeCommit(t *testing.T) {
	pool := pgtest.Pool(t)
	e := inTx(t, pool)
	ctx := t.Context()
	cp := s28bPut(t, e.Inner, "killed")
	for _, sql := range []string{
		`CREATE FUNCTION s28b_sleep() RETURNS trigger LANGUAGE plpgsql AS $$BEGIN IF NEW.target = 'killed' THEN PERFORM pg_sleep(3600); END IF; RETURN NEW; END$$`,
		`CREATE TRIGGER s28b_sleep_t AFTER INSERT ON memvault_audit_pending FOR EACH ROW EXECUTE FUNCTION s28b_sleep()`,
	} {
		if _, err := pool.Exec(ctx, sql); err != nil {
			t.Fatal(err)
		}
	}
	read := func(name string, f func() (bool, error)) {
		done := make(chan struct{})
		var got bool
		var err error
		go func() { defer close(done); got, err = f() }()
		// Wait (no timing) for a backend asleep in the trigger, kill it.
		for {
			var n int
			if err := pool.QueryRow(ctx, `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE wait_event = 'PgSleep' AND pid <> pg_backend_pid() AND datname = current_database()`).Scan(&n); err != nil {
				t.Fatal(err)
			}
			if n > 0 {
				break
			}
			select {
			case <-done:
				t.Fatalf("%s returned (%v, %v) before its backend was killed", name, got, err)
			default:
			}
		}
		<-done
		if got || err == nil {
			t.Errorf("%s whose backend was killed before its commit = data %v, %v; want none and an error", name, got, err)
		}
	}
	read("GetTuple", func() (bool, error) {
		tp, err := e.Saver.GetTuple(ctx, checkpointer.Config{ThreadID: "killed"})
		return tp != nil, err
	})
	read("GetTuple by id", func() (bool, error) {
		tp, err := e.Saver.GetTuple(ctx, checkpointer.Config{ThreadID: "killed", CheckpointID: cp.ID})
		return tp != nil, err
	})
	read("List(10)", func() (bool, error) {
		var got bool
		var first error
		for tp, err := range e.Saver.List(ctx, &checkpointer.Config{ThreadID: "killed"}, checkpointer.ListOptions{Limit: 10}) {
			got = got || tp != nil
			if err != nil && first == nil {
				first = err
			}
		}
		return got, first
	})
	if n := s28bPending(t, pool, "killed"); n != 0 {
		t.Fatalf("%d pending records of killed reads", n)
	}
	if _, err := e.Trail.Verify(ctx); err != nil && !errors.Is(err, context.Canceled) {
		t.Fatal(err)
	}
}

// TestS28bHostileThreadIDsInReadStatement: thread ids with SQL
// metacharacters, NUL and invalid UTF-8 through lone reads that carry
// their record in the read's statement: the bad ones fail with
// checkpointer.ErrInvalidID and leave no record; the others are recorded
// with exactly their id, once each, and the chain verifies.
func TestS28bHostileThreadIDsInReadStatement(t *testing.T) {
	pool := pgtest.Pool(t)
	e := inTx(t, pool)
	ctx := t.Context()
	good := []string{"a'b", `x"); DROP TABLE checkpoints; --`, "$1", "WITH r AS (SELECT 1)", "é\u2028\ufeff", strings.Repeat("z", 512)}
	for _, id := range good {
		s28bPut(t, e.Inner, id)
		if data, failed := s28bReads(ctx, e.Saver, id, ""); data != 3 || failed != 0 {
			t.Fatalf("reads of thread %.40q: %d returned data, %d failed", id, data, failed)
		}
	}
	for _, id := range []string{"a\x00b", "\xff\xfe", "ok\xc3"} {
		if _, err := e.Saver.GetTuple(ctx, checkpointer.Config{ThreadID: id}); !errors.Is(err, checkpointer.ErrInvalidID) {
			t.Errorf("GetTuple(%q) = %v, want ErrInvalidID", id, err)
		}
		for _, err := range e.Saver.List(ctx, &checkpointer.Config{ThreadID: id}, checkpointer.ListOptions{Limit: 10}) {
			if !errors.Is(err, checkpointer.ErrInvalidID) {
				t.Errorf("List(%q) = %v, want ErrInvalidID", id, err)
			}
		}
	}
	if err := e.Trail.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	got := map[string]int{}
	if err := e.Trail.Records(ctx, audit.Filter{}, func(r audit.Record) error {
		if r.Op == audit.OpCheckpointRead {
			got[r.Target]++
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	for _, id := range good {
		if got[id] != 3 {
			t.Errorf("thread %.40q: %d read records, want 3", id, got[id])
		}
		delete(got, id)
	}
	if len(got) != 0 {
		t.Errorf("records of other targets: %v", got)
	}
	if _, err := e.Trail.Verify(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestS28bMixedPathsExactlyOnce: readers starting and ending at random
// moments switch between the lone path (record in the read's statement)
// and the readers' group, GetTuple, List(10) and unbounded List mixed,
// with puts between: every read that returned is recorded exactly once
// (neither both paths nor none), and the chain verifies.
func TestS28bMixedPathsExactlyOnce(t *testing.T) {
	pool := pgtest.Pool(t)
	e := inTx(t, pool)
	ctx := t.Context()
	const workers, rounds = 6, 40
	for w := range workers {
		s28bPut(t, e.Inner, fmt.Sprint("mix-", w))
	}
	var wg sync.WaitGroup
	okReads := make([]int, workers)
	errs := make(chan error, workers)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			thread := fmt.Sprint("mix-", w)
			for i := range rounds {
				switch (i + w) % 4 {
				case 0, 1:
					if tp, err := e.Saver.GetTuple(ctx, checkpointer.Config{ThreadID: thread}); err != nil || tp == nil {
						errs <- fmt.Errorf("GetTuple(%s) = %v, %v", thread, tp, err)
						return
					}
				case 2, 3:
					opt := checkpointer.ListOptions{Limit: 10}
					if i%4 == 3 {
						opt = checkpointer.ListOptions{}
					}
					for _, err := range e.Saver.List(ctx, &checkpointer.Config{ThreadID: thread}, opt) {
						if err != nil {
							errs <- err
							return
						}
					}
				}
				okReads[w]++
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if err := e.Trail.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	got := map[string]int{}
	if err := e.Trail.Records(ctx, audit.Filter{}, func(r audit.Record) error {
		if r.Op == audit.OpCheckpointRead {
			got[r.Target]++
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	for w := range workers {
		if th := fmt.Sprint("mix-", w); got[th] != okReads[w] {
			t.Errorf("%s: %d read records for %d reads", th, got[th], okReads[w])
		}
	}
	if n := s28bPending(t, pool, "mix-0"); n != 0 {
		t.Errorf("%d pending rows of mix-0 left after Flush", n)
	}
	if _, err := e.Trail.Verify(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestS28bReadRecordRetried: the read's statement fails with a
// serialization failure (40001, which pgretry.Owned retries) raised by
// its record's insert, once per read, then passes: each read returns its
// data with exactly one record (the aborted attempt stored none). When
// every attempt fails, the read returns no data and leaves no record.
func TestS28bReadRecordRetried(t *testing.T) {
	pool := pgtest.Pool(t)
	e := inTx(t, pool)
	ctx := t.Context()
	cp := s28bPut(t, e.Inner, "retry")
	s28bPut(t, e.Inner, "never")
	for _, sql := range []string{
		`CREATE SEQUENCE s28b_seq`,
		`CREATE FUNCTION s28b_flaky() RETURNS trigger LANGUAGE plpgsql AS $$BEGIN
			IF NEW.target = 'never' OR (NEW.target = 'retry' AND nextval('s28b_seq') % 2 = 1) THEN
				RAISE EXCEPTION 's28b: serialization' USING ERRCODE = '40001';
			END IF; RETURN NEW; END$$`,
		`CREATE TRIGGER s28b_flaky_t AFTER INSERT ON memvault_audit_pending FOR EACH ROW EXECUTE FUNCTION s28b_flaky()`,
		// A read alone in flight chains its record itself once the trail's
		// head is known (after the retried reads' records were chained):
		// the same failures there (a row with no pending id is such a
		// record; the chainer's rows carry theirs).
		`CREATE TRIGGER s28b_flaky_c AFTER INSERT ON memvault_audit FOR EACH ROW WHEN (NEW.pending_id IS NULL) EXECUTE FUNCTION s28b_flaky()`,
	} {
		if _, err := pool.Exec(ctx, sql); err != nil {
			t.Fatal(err)
		}
	}
	if data, failed := s28bReads(ctx, e.Saver, "retry", cp.ID); data != 3 || failed != 0 {
		t.Fatalf("reads retried once: %d returned data, %d failed; want 3 and 0", data, failed)
	}
	if data, failed := s28bReads(ctx, e.Saver, "never", ""); data != 0 || failed != 3 {
		t.Fatalf("reads failing every attempt: %d returned data, %d failed; want 0 and 3", data, failed)
	}
	var attempts int64
	if err := pool.QueryRow(ctx, `SELECT last_value FROM s28b_seq`).Scan(&attempts); err != nil {
		t.Fatal(err)
	}
	if attempts != 6 {
		t.Logf("%d attempts of the retried reads' records (6 expected: the statement was not retried as one?)", attempts)
	}
	if err := e.Trail.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	got := map[string]int{}
	if err := e.Trail.Records(ctx, audit.Filter{}, func(r audit.Record) error {
		if r.Op == audit.OpCheckpointRead {
			got[r.Target]++
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if got["retry"] != 3 || got["never"] != 0 {
		t.Fatalf("read records: retry %d (want 3), never %d (want 0)", got["retry"], got["never"])
	}
	if _, err := e.Trail.Verify(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestS28bReadCancelledMidStatement: the caller's context is cancelled
// while the read's statement runs its record's insert (a trigger sleeps
// in it; the test waits for it, not for time): the read fails with the
// context's error, returns nothing, and no record commits.
func TestS28bReadCancelledMidStatement(t *testing.T) {
	pool := pgtest.Pool(t)
	e := inTx(t, pool)
	cp := s28bPut(t, e.Inner, "cancelled")
	for _, sql := range []string{
		`CREATE FUNCTION s28b_sleep2() RETURNS trigger LANGUAGE plpgsql AS $$BEGIN IF NEW.target = 'cancelled' THEN PERFORM pg_sleep(3600); END IF; RETURN NEW; END$$`,
		`CREATE TRIGGER s28b_sleep2_t AFTER INSERT ON memvault_audit_pending FOR EACH ROW EXECUTE FUNCTION s28b_sleep2()`,
	} {
		if _, err := pool.Exec(t.Context(), sql); err != nil {
			t.Fatal(err)
		}
	}
	read := func(name string, f func(ctx context.Context) (bool, error)) {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		done := make(chan struct{})
		var got bool
		var err error
		go func() { defer close(done); got, err = f(ctx) }()
		for {
			var n int
			if err := pool.QueryRow(t.Context(), `SELECT count(*) FROM pg_stat_activity WHERE wait_event = 'PgSleep' AND datname = current_database()`).Scan(&n); err != nil {
				t.Fatal(err)
			}
			if n > 0 {
				break
			}
			select {
			case <-done:
				t.Fatalf("%s returned (%v, %v) before it was cancelled", name, got, err)
			default:
			}
		}
		cancel()
		<-done
		if got || !errors.Is(err, context.Canceled) {
			t.Errorf("%s cancelled mid-statement = data %v, %v; want none and context.Canceled", name, got, err)
		}
	}
	read("GetTuple", func(ctx context.Context) (bool, error) {
		tp, err := e.Saver.GetTuple(ctx, checkpointer.Config{ThreadID: "cancelled", CheckpointID: cp.ID})
		return tp != nil, err
	})
	read("List(10)", func(ctx context.Context) (bool, error) {
		var got bool
		var first error
		for tp, err := range e.Saver.List(ctx, &checkpointer.Config{ThreadID: "cancelled"}, checkpointer.ListOptions{Limit: 10}) {
			got = got || tp != nil
			if err != nil && first == nil {
				first = err
			}
		}
		return got, first
	})
	// Wait until the cancelled statements ended on the server (a
	// statement still asleep could commit its record later).
	for {
		var n int
		if err := pool.QueryRow(t.Context(), `SELECT count(*) FROM pg_stat_activity WHERE wait_event = 'PgSleep' AND datname = current_database()`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			break
		}
	}
	if n := s28bPending(t, pool, "cancelled"); n != 0 {
		t.Fatalf("%d pending records of cancelled reads", n)
	}
}
