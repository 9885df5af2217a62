package durable_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/memvault/memvault/audit"
	"github.com/memvault/memvault/audit/audittest"
	"github.com/memvault/memvault/audit/pgaudit"
	"github.com/memvault/memvault/audit/sqliteaudit"
	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/checkpointer/durable"
	"github.com/memvault/memvault/checkpointer/pgsaver"
	"github.com/memvault/memvault/memvaulttest/pgtest"
)

// auditedExit is an audit saver over the decorator in Exit mode over a
// saver of backend ("sqlite" or "postgres"), the trail in the same
// database (records in the writes' transactions). The decorator is closed
// by the caller or at t's end.
func auditedExit(t *testing.T, backend string) (checkpointer.Saver, *durable.Saver, audit.PendingTable, *audit.Trail) {
	t.Helper()
	return auditedExitOver(t, backend, func(d *durable.Saver) checkpointer.Saver { return d })
}

// auditedExitOver is auditedExit with the audit saver over wrap(the
// decorator).
func auditedExitOver(t *testing.T, backend string, wrap func(*durable.Saver) checkpointer.Saver) (checkpointer.Saver, *durable.Saver, audit.PendingTable, *audit.Trail) {
	t.Helper()
	ctx := context.Background()
	var inner checkpointer.Saver
	var tb audit.PendingTable
	switch backend {
	case "sqlite":
		path := filepath.Join(t.TempDir(), "cp.db")
		inner = newSQLite(t, path)
		st, err := sqliteaudit.Open(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		tb = st
	case "postgres":
		pool := pgtest.Pool(t) // one schema for the saver and the trail
		ps, err := pgsaver.New(pool, pgsaver.Options{})
		if err != nil {
			t.Fatal(err)
		}
		pt, err := pgaudit.New(pool, pgaudit.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if err := ps.Setup(ctx); err != nil {
			t.Fatal(err)
		}
		if err := pt.Setup(ctx); err != nil {
			t.Fatal(err)
		}
		inner, tb = ps, pt
	}
	tr, err := audittest.InTxTrail(tb)
	if err != nil {
		t.Fatal(err)
	}
	d, err := durable.New(inner, durable.Options{Mode: durable.Exit})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	if !d.RecordsInTx() {
		t.Fatalf("the decorator over the %s saver should take records in its writes' transactions", backend)
	}
	return audit.NewSaver(wrap(d), tr, nil), d, tb, tr
}

// putN puts checkpoint n of cfg's thread and returns its config.
func putN(t *testing.T, s checkpointer.Saver, cfg checkpointer.Config, n int) checkpointer.Config {
	t.Helper()
	cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(n), TS: time.Now(),
		ChannelValues: map[string]any{"a": "1"}, ChannelVersions: map[string]string{"a": "1"}}
	out, err := s.Put(context.Background(), cfg, cp, checkpointer.Metadata{}, map[string]string{"a": "1"})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestQueuedRecordChainedAfterCommit: an audited put queued by the
// decorator (Exit mode: nothing is written until the thread is waited
// for) commits its record only when the queue is written, long after the
// chaining run its return armed found nothing to chain. The commit must
// arm another run (RecordRow.Stored), so the record is chained within
// moments of its commit, as the README promises, and not left pending
// until the next Flush or Close of the trail.
func TestQueuedRecordChainedAfterCommit(t *testing.T) {
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) { testQueuedRecordChainedAfterCommit(t, backend) })
	}
}

func testQueuedRecordChainedAfterCommit(t *testing.T, backend string) {
	ctx := context.Background()
	s, d, tb, tr := auditedExit(t, backend)
	putN(t, s, checkpointer.Config{ThreadID: "queued"}, 1)
	// The run Put's return armed (due in about 20 ms) finds no record:
	// the write is still queued. Wait until it has surely come and gone.
	time.Sleep(500 * time.Millisecond)
	if p, err := tb.PagePending(ctx, time.Time{}, "", 1); err != nil || len(p) != 0 {
		t.Fatalf("before the queue is written: %d pending records, %v; want none", len(p), err)
	}
	// The decorator's own Flush writes the queue (the trail's Flush, or
	// the audit saver's Close, would chain the trail too, hiding the
	// defect).
	if err := d.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	// Event-driven: the commit arms a run due in about 20 ms; a minute
	// only bounds a run that never comes.
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(5 * time.Millisecond) {
		p, err := tb.PagePending(ctx, time.Time{}, "", 1)
		if err != nil {
			t.Fatal(err)
		}
		if len(p) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("a queued write's record, committed after the chaining run its Put armed, was never chained")
		}
	}
	n, err := tr.Verify(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if n != 1 {
		t.Fatalf("the trail holds %d records, want the put's 1", n)
	}
}

// TestAuditCloseChainsQueuedRecords: closing the audit saver over the
// decorator writes the queues before the trail's last chaining run, so
// a clean shutdown leaves no pending record for the next process (before,
// the trail was flushed first and the queued writes' records, committed
// by the decorator's Close after it, stayed pending).
func TestAuditCloseChainsQueuedRecords(t *testing.T) {
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) { testAuditCloseChainsQueuedRecords(t, backend) })
	}
}

func testAuditCloseChainsQueuedRecords(t *testing.T, backend string) {
	ctx := context.Background()
	s, _, tb, tr := auditedExit(t, backend)
	cfg := checkpointer.Config{ThreadID: "closing"}
	for i := 1; i <= 3; i++ {
		cfg = putN(t, s, cfg, i)
	}
	closer, ok := s.(interface{ Close() error })
	if !ok {
		t.Fatal("the audit saver has no Close")
	}
	if err := closer.Close(); err != nil {
		t.Fatal(err)
	}
	// No waiting: Close itself must have chained them.
	if p, err := tb.PagePending(ctx, time.Time{}, "", 10); err != nil || len(p) != 0 {
		t.Fatalf("after Close: %d pending records, %v; want none", len(p), err)
	}
	if n, err := tr.Verify(ctx); err != nil || n != 3 {
		t.Fatalf("the trail holds %d records (%v), want the 3 puts'", n, err)
	}
}

// lateFlusher is the decorator whose Flush, once done, runs late: a put
// another goroutine makes just after the audit saver's Close flushed the
// queues, as a Close racing with a running graph would see.
type lateFlusher struct {
	*durable.Saver
	late func()
}

func (l *lateFlusher) Flush(ctx context.Context) error {
	err := l.Saver.Flush(ctx)
	if l.late != nil {
		l.late()
		l.late = nil
	}
	return err
}

// TestAuditCloseChainsWritesCommittedByInnerClose (session 39, carried as
// "audit.Saver.Close flushes the trail before the inner saver's Close"):
// the audit saver's Close wrote the decorator's queues (its Flush),
// chained the trail, then closed the decorator — whose Close writes what
// was queued after that Flush (a put racing with Close), committing
// records after the trail's last chaining run: they stayed pending for
// the next process. Close now closes the inner saver before the trail's
// last chaining run, so a put queued after the Flush is chained too.
func TestAuditCloseChainsWritesCommittedByInnerClose(t *testing.T) {
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) { testAuditCloseChainsWritesCommittedByInnerClose(t, backend) })
	}
}

func testAuditCloseChainsWritesCommittedByInnerClose(t *testing.T, backend string) {
	ctx := context.Background()
	lf := &lateFlusher{}
	s, _, tb, tr := auditedExitOver(t, backend, func(d *durable.Saver) checkpointer.Saver {
		lf.Saver = d
		return lf
	})
	cfg := putN(t, s, checkpointer.Config{ThreadID: "closing"}, 1)
	lf.late = func() { putN(t, s, cfg, 2) } // queued (Exit mode), written by the decorator's Close
	if err := s.(interface{ Close() error }).Close(); err != nil {
		t.Fatal(err)
	}
	// No waiting: Close itself must have chained both.
	if p, err := tb.PagePending(ctx, time.Time{}, "", 10); err != nil || len(p) != 0 {
		t.Fatalf("after Close: %d pending records, %v; want none", len(p), err)
	}
	if n, err := tr.Verify(ctx); err != nil || n != 2 {
		t.Fatalf("the trail holds %d records (%v), want the 2 puts'", n, err)
	}
}
