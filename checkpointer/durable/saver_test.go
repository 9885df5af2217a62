package durable_test

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/checkpointer/durable"
)

// step returns the checkpoint of step i of a thread whose "base" channel
// is written at step 0 and inherited after: every later put needs its
// parent.
func step(sv checkpointer.Saver, i int, versions map[string]string) (*checkpointer.Checkpoint, map[string]string) {
	nv := map[string]string{"counter": sv.NextVersion(versions["counter"])}
	if i == 0 {
		nv["base"] = sv.NextVersion("")
	}
	for k, v := range nv {
		versions[k] = v
	}
	return &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(i), ChannelValues: map[string]any{"base": "b", "counter": int64(i)},
		ChannelVersions: versions, VersionsSeen: map[string]map[string]string{}}, nv
}

// TestQueuedFailure: a queued put whose parent another process removed
// fails in the background; the error is returned by the next call on the
// thread and every later one until Flush returns it, the writes queued
// after it are discarded (not stored), other threads go on, and the
// thread accepts writes again after Flush. With MaxBatch 1 the discarded
// writes are still in the queue when the put fails; by default they are
// in its batch.
func TestQueuedFailure(t *testing.T) {
	for _, batch := range []int{1, 0} {
		t.Run(fmt.Sprint("batch=", batch), func(t *testing.T) { testQueuedFailure(t, batch) })
	}
}

func testQueuedFailure(t *testing.T, batch int) {
	inner := newSQLite(t, "")
	sv := wrap(t, inner, durable.Options{Mode: durable.Exit, MaxBatch: batch})
	ctx := t.Context()
	versions := map[string]string{}
	cp0, nv := step(sv, 0, versions)
	c0, err := sv.Put(ctx, checkpointer.Config{ThreadID: "t"}, cp0, nil, nv)
	if err != nil {
		t.Fatal(err)
	}
	if err := sv.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	// Queued (Exit mode: not written yet) continuing c0, which this
	// saver queued last.
	cp1, nv := step(sv, 1, versions)
	c1, err := sv.Put(ctx, c0, cp1, nil, nv)
	if err != nil {
		t.Fatalf("Put continuing the last queued checkpoint: %v", err)
	}
	if err := sv.PutWrites(ctx, c1, []checkpointer.Write{{Channel: "note", Value: "x"}}, "task", ""); err != nil {
		t.Fatal(err)
	}
	cp2, nv := step(sv, 2, versions)
	if _, err := sv.Put(ctx, c1, cp2, nil, nv); err != nil {
		t.Fatal(err)
	}
	// Another thread's queue is unaffected.
	other, nv := step(sv, 0, map[string]string{})
	if _, err := sv.Put(ctx, checkpointer.Config{ThreadID: "other"}, other, nil, nv); err != nil {
		t.Fatal(err)
	}
	// Another process deletes the thread behind the decorator's back.
	if err := inner.DeleteThread(ctx, "t"); err != nil {
		t.Fatal(err)
	}
	_, err = sv.GetTuple(ctx, checkpointer.Config{ThreadID: "t"})
	if !errors.Is(err, durable.ErrWriteFailed) || !errors.Is(err, checkpointer.ErrParentMissing) {
		t.Fatalf("GetTuple after a failed queued put = %v, want ErrWriteFailed wrapping ErrParentMissing", err)
	}
	if !strings.Contains(err.Error(), "2 later queued writes of the thread discarded") || !strings.Contains(err.Error(), cp1.ID) {
		t.Fatalf("error %q does not name the failed put %s and the 2 discarded writes", err, cp1.ID)
	}
	// Sticky: every call on the thread returns it, writes are refused.
	if _, err := sv.Put(ctx, checkpointer.Config{ThreadID: "t"}, cp0, nil, nil); !errors.Is(err, durable.ErrWriteFailed) {
		t.Fatalf("Put after the failure = %v, want ErrWriteFailed", err)
	}
	// A removal works on what is stored: the failure does not refuse it
	// and, unless the whole thread goes, stays on the thread.
	if err := sv.DeleteCheckpoint(ctx, c0); err != nil {
		t.Fatalf("DeleteCheckpoint after the failure = %v, want nil", err)
	}
	if _, err := sv.GetTuple(ctx, checkpointer.Config{ThreadID: "t"}); !errors.Is(err, durable.ErrWriteFailed) {
		t.Fatalf("GetTuple after DeleteCheckpoint = %v, want the failure still on the thread", err)
	}
	// Deleting the thread (as an erasure does) starts it afresh: the
	// failure is left for Flush.
	if err := sv.DeleteThread(ctx, "t"); err != nil {
		t.Fatalf("DeleteThread after the failure = %v, want nil", err)
	}
	if tp, err := sv.GetTuple(ctx, checkpointer.Config{ThreadID: "t"}); err != nil || tp != nil {
		t.Fatalf("GetTuple after DeleteThread = %v, %v; want nothing, no error", tp, err)
	}
	if tp, err := sv.GetTuple(ctx, checkpointer.Config{ThreadID: "other"}); err != nil || tp == nil {
		t.Fatalf("other thread: %v, %v", tp, err)
	}
	if err := sv.Flush(ctx); !errors.Is(err, checkpointer.ErrParentMissing) {
		t.Fatalf("Flush = %v, want the failure", err)
	}
	if err := sv.Flush(ctx); err != nil {
		t.Fatalf("second Flush = %v: the error is returned once", err)
	}
	// Nothing after the failure was stored: the thread is a prefix.
	if tp, err := inner.GetTuple(ctx, checkpointer.Config{ThreadID: "t"}); err != nil || tp != nil {
		t.Fatalf("thread after the failure: %v, %v; want nothing (c0 deleted, c1 and c2 refused)", tp, err)
	}
	if _, err := sv.Put(ctx, checkpointer.Config{ThreadID: "t"}, cp0, nil, map[string]string{"base": cp0.ChannelVersions["base"], "counter": cp0.ChannelVersions["counter"]}); err != nil {
		t.Fatalf("Put after Flush: %v", err)
	}
}

// TestContinuingStoredCheckpointIsSynchronous: a put continuing a
// checkpoint read from storage (not the one this saver queued last) is
// written before Put returns, so a parent that is gone is reported by Put
// itself, as a synchronous saver does.
func TestContinuingStoredCheckpointIsSynchronous(t *testing.T) {
	inner := newSQLite(t, "")
	ctx := t.Context()
	versions := map[string]string{}
	cp0, nv := step(inner, 0, versions)
	c0, err := inner.Put(ctx, checkpointer.Config{ThreadID: "t"}, cp0, nil, nv)
	if err != nil {
		t.Fatal(err)
	}
	sv := wrap(t, inner, durable.Options{Mode: durable.Async})
	if err := inner.DeleteThread(ctx, "t"); err != nil {
		t.Fatal(err)
	}
	cp1, nv := step(sv, 1, versions)
	if _, err := sv.Put(ctx, c0, cp1, nil, nv); !errors.Is(err, checkpointer.ErrParentMissing) {
		t.Fatalf("Put continuing a deleted stored checkpoint = %v, want ErrParentMissing from Put itself", err)
	}
	if err := sv.Flush(ctx); err != nil {
		t.Fatalf("Flush = %v: the failure was already reported", err)
	}
}

// TestBackPressure: many writers on many threads through a queue of two
// all get their writes stored, in order, in both queued modes.
func TestBackPressure(t *testing.T) {
	for _, mode := range []durable.Mode{durable.Async, durable.Exit} {
		t.Run(mode.String(), func(t *testing.T) {
			sv := wrap(t, newSQLite(t, ""), durable.Options{Mode: mode, MaxQueued: 2, MaxBatch: 3})
			const threads, steps = 8, 25
			var wg sync.WaitGroup
			errs := make(chan error, threads)
			for th := range threads {
				wg.Go(func() {
					cfg := checkpointer.Config{ThreadID: fmt.Sprint("bp-", th)}
					versions := map[string]string{}
					for i := range steps {
						cp, nv := step(sv, i, versions)
						next, err := sv.Put(t.Context(), cfg, cp, nil, nv)
						if err != nil {
							errs <- err
							return
						}
						if err := sv.PutWrites(t.Context(), next, []checkpointer.Write{{Channel: "n", Value: i}}, "task", ""); err != nil {
							errs <- err
							return
						}
						cfg = next
					}
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Fatal(err)
			}
			if err := sv.Flush(t.Context()); err != nil {
				t.Fatal(err)
			}
			for th := range threads {
				n := 0
				for tp, err := range sv.Inner().List(t.Context(), &checkpointer.Config{ThreadID: fmt.Sprint("bp-", th)}, checkpointer.ListOptions{}) {
					if err != nil {
						t.Fatal(err)
					}
					if want := int64(steps - 1 - n); tp.Checkpoint.ChannelValues["counter"] != want || tp.Checkpoint.ChannelValues["base"] != "b" || len(tp.PendingWrites) != 1 {
						t.Fatalf("thread %d, step %d: %v with %d writes", th, want, tp.Checkpoint.ChannelValues, len(tp.PendingWrites))
					}
					n++
				}
				if n != steps {
					t.Fatalf("thread %d: %d steps stored, want %d", th, n, steps)
				}
			}
		})
	}
}

// TestOptions: options New cannot honour are refused; ParseMode reads
// LangGraph's names.
func TestOptions(t *testing.T) {
	for _, opt := range []durable.Options{{Mode: 3}, {Mode: -1}, {MaxQueued: -1}, {MaxBatch: -1}} {
		if _, err := durable.New(newMem(t), opt); !errors.Is(err, durable.ErrInvalidOptions) {
			t.Errorf("New(%+v) = %v, want ErrInvalidOptions", opt, err)
		}
	}
	if _, err := durable.New(nil, durable.Options{}); !errors.Is(err, durable.ErrInvalidOptions) {
		t.Errorf("New(nil) = %v, want ErrInvalidOptions", err)
	}
	for _, m := range []durable.Mode{durable.Sync, durable.Async, durable.Exit} {
		if got, err := durable.ParseMode(m.String()); err != nil || got != m {
			t.Errorf("ParseMode(%q) = %v, %v", m, got, err)
		}
	}
	if _, err := durable.ParseMode("later"); !errors.Is(err, durable.ErrInvalidOptions) {
		t.Errorf("ParseMode(later) = %v, want ErrInvalidOptions", err)
	}
}

// TestClose: Close writes the queues, closes the inner saver, and later
// calls are refused with ErrClosed.
func TestClose(t *testing.T) {
	path := t.TempDir() + "/c.db"
	sv, err := durable.New(newSQLite(t, path), durable.Options{Mode: durable.Exit})
	if err != nil {
		t.Fatal(err)
	}
	cp, nv := step(sv, 0, map[string]string{})
	if _, err := sv.Put(t.Context(), checkpointer.Config{ThreadID: "t"}, cp, nil, nv); err != nil {
		t.Fatal(err)
	}
	if err := sv.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := sv.GetTuple(t.Context(), checkpointer.Config{ThreadID: "t"}); !errors.Is(err, durable.ErrClosed) {
		t.Fatalf("GetTuple after Close = %v, want ErrClosed", err)
	}
	if _, err := sv.Put(t.Context(), checkpointer.Config{ThreadID: "t"}, cp, nil, nv); !errors.Is(err, durable.ErrClosed) {
		t.Fatalf("Put after Close = %v, want ErrClosed", err)
	}
	re := newSQLite(t, path)
	defer re.Close()
	if tp, err := re.GetTuple(t.Context(), checkpointer.Config{ThreadID: "t"}); err != nil || tp == nil || tp.Checkpoint.ID != cp.ID {
		t.Fatalf("after Close the queued put is stored: %v, %v", tp, err)
	}
}
