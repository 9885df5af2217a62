package durable_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/memvault/memvault/audit"
	"github.com/memvault/memvault/audit/audittest"
	"github.com/memvault/memvault/audit/sqliteaudit"
	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/checkpointer/durable"
)

// TestCloseTwice: a second Close of the decorator, or of an audit saver
// over it, returns what the first returned (nil here), as the store
// engine's and the SQLite handles' Close do; before, it failed with
// ErrClosed (the audit saver's twice: its Flush of the decorator and the
// decorator's Close).
func TestCloseTwice(t *testing.T) {
	t.Run("durable", func(t *testing.T) {
		d, err := durable.New(newSQLite(t, filepath.Join(t.TempDir(), "c.db")), durable.Options{Mode: durable.Exit})
		if err != nil {
			t.Fatal(err)
		}
		putN(t, d, checkpointer.Config{ThreadID: "t"}, 1)
		for i := range 3 {
			if err := d.Close(); err != nil {
				t.Fatalf("Close %d: %v", i+1, err)
			}
		}
	})
	t.Run("audit", func(t *testing.T) {
		s, _, _, tr := auditedExit(t, "sqlite")
		putN(t, s, checkpointer.Config{ThreadID: "t"}, 1)
		c := s.(interface{ Close() error })
		for i := range 3 {
			if err := c.Close(); err != nil {
				t.Fatalf("Close %d: %v", i+1, err)
			}
		}
		if n, err := tr.Verify(context.Background()); err != nil || n != 1 {
			t.Fatalf("the trail holds %d records (%v), want the put's 1", n, err)
		}
	})
}

// TestRecordCommittedAfterTrailClosedStaysPending: a queued write whose
// transaction commits after the trail's table was closed (a put racing a
// shutdown) arms a chaining run (RecordRow.Stored) that has no table to
// chain through; its error is dropped. Nothing is lost or hidden: the
// record is in the pending table, a check of the trail counts it, and
// the next process's trail links it.
func TestRecordCommittedAfterTrailClosedStaysPending(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "cp.db")
	inner := newSQLite(t, path)
	tb, err := sqliteaudit.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := audittest.InTxTrail(tb)
	if err != nil {
		t.Fatal(err)
	}
	d, err := durable.New(inner, durable.Options{Mode: durable.Exit})
	if err != nil {
		t.Fatal(err)
	}
	s := audit.NewSaver(d, tr, nil)
	putN(t, s, checkpointer.Config{ThreadID: "late"}, 1) // queued
	if err := tb.Close(); err != nil {
		t.Fatal(err)
	}
	// The queue is written now: its transaction commits the record.
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	// The next process: its trail finds the record pending, and links it.
	tb2, err := sqliteaudit.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer tb2.Close()
	tr2, err := audittest.InTxTrail(tb2)
	if err != nil {
		t.Fatal(err)
	}
	// The run armed by the commit may still be running (on the closed
	// handle): Flush takes the chainer's lock of this trail only, so the
	// count is read until it settles — a record is pending or chained,
	// never gone.
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(5 * time.Millisecond) {
		rep, err := tr2.Check(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		if rep.Records+rep.Pending == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the late write's record is neither chained nor pending: %+v", rep)
		}
	}
	if err := tr2.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	rep, err := tr2.Check(ctx, nil)
	if err != nil || rep.Records != 1 || rep.Pending != 0 {
		t.Fatalf("after the next process's Flush: %+v, %v; want 1 record chained, none pending", rep, err)
	}
}
