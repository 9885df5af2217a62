package audittest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/memvault/memvault/audit"
	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/memvaulttest/childproc"
)

// RunReads checks that an audited read records as a pending record
// committed by itself: a read whose record is refused returns no data
// (GetTuple no tuple, List nothing but the error), and a read does not
// wait for the chain's appender (when the storage can block it).
func RunReads(t *testing.T, open func(t *testing.T) InTx) {
	t.Run("a read whose record fails returns nothing", func(t *testing.T) {
		e := open(t)
		ctx := context.Background()
		cfg, err := e.Saver.Put(ctx, checkpointer.Config{ThreadID: "secret"}, checkpoint(1), checkpointer.Metadata{}, map[string]string{"a": "1"})
		if err != nil {
			t.Fatal(err)
		}
		if err := e.Trail.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		e.RefuseRecords(t, "secret")
		if tp, err := e.Saver.GetTuple(ctx, cfg); err == nil || tp != nil {
			t.Fatalf("GetTuple whose record is refused = %v, %v; want no tuple and an error", tp, err)
		}
		n := 0
		for tp, err := range e.Saver.List(ctx, &checkpointer.Config{ThreadID: "secret"}, checkpointer.ListOptions{}) {
			if tp != nil || err == nil {
				t.Fatalf("List whose record is refused yielded %v, %v; want only an error", tp, err)
			}
			n++
		}
		if n != 1 {
			t.Fatalf("List whose record is refused yielded %d errors, want 1", n)
		}
		// The refusal was the record's: the trail is whole, and other
		// threads' reads go on.
		if _, err := e.Trail.Verify(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := e.Saver.GetTuple(ctx, checkpointer.Config{ThreadID: "other"}); err != nil {
			t.Fatalf("a read of another thread: %v", err)
		}
	})
	t.Run("concurrent reads share rows", func(t *testing.T) { runSharedRows(t, open) })
	t.Run("a read alone chains its own record", func(t *testing.T) { runChainedRead(t, open) })
	t.Run("reads of several trails chain at once", func(t *testing.T) { runChainedRace(t, open) })
	t.Run("a read does not wait for the chain", func(t *testing.T) {
		e := open(t)
		if e.BlockChain == nil {
			t.Skip("the storage cannot block the chain without blocking pending records")
		}
		ctx := context.Background()
		cfg, err := e.Saver.Put(ctx, checkpointer.Config{ThreadID: "r"}, checkpoint(1), checkpointer.Metadata{}, map[string]string{"a": "1"})
		if err != nil {
			t.Fatal(err)
		}
		if err := e.Trail.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		release := e.BlockChain(t)
		// A guard, not a figure of speed: a read that waits for the
		// blocked chain would otherwise hang.
		guard, cancel := context.WithTimeout(ctx, time.Minute)
		tp, err := e.Saver.GetTuple(guard, cfg)
		listed := 0
		for tp, lerr := range e.Saver.List(guard, &cfg, checkpointer.ListOptions{}) {
			if lerr != nil {
				err = errors.Join(err, lerr)
				break
			}
			if tp != nil {
				listed++
			}
		}
		cancel()
		release()
		if err != nil || tp == nil || listed != 1 {
			t.Fatalf("reads while the chain is blocked: GetTuple %v, List %d tuples, %v", tp, listed, err)
		}
		rep, err := e.Trail.Check(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		if n := writeRecords(t, e.Trail, audit.OpCheckpointRead)["r"]; n != 2 {
			t.Fatalf("%d records of the two reads (%d were pending), want 2", n, rep.Pending)
		}
	})
}

// readRecords returns the chained records of reads of target: how many,
// and how many of them a read chained itself (no pending id).
func readRecords(t *testing.T, tr *audit.Trail, target string) (all, direct int) {
	t.Helper()
	if err := tr.Records(context.Background(), audit.Filter{}, func(r audit.Record) error {
		if r.Op == audit.OpCheckpointRead && r.Target == target {
			all++
			if r.PendingID == "" {
				direct++
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return all, direct
}

// runChainedRead checks that a read alone in flight, once the trail knows
// its head (this process appended), chains its record in its own
// transaction — one row of the chain with no pending id — and that the
// trail verifies.
func runChainedRead(t *testing.T, open func(t *testing.T) InTx) {
	e := open(t)
	if _, ok := e.Table.(audit.ChainRowTable); !ok {
		t.Skip("the table takes no record chained by a read")
	}
	ctx := context.Background()
	cfg, err := e.Saver.Put(ctx, checkpointer.Config{ThreadID: "direct"}, checkpoint(1), checkpointer.Metadata{}, map[string]string{"a": "1"})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Trail.Flush(ctx); err != nil { // chains the put's record: the head is known
		t.Fatal(err)
	}
	// The put armed a chaining run (chainDelay after its record) that the
	// Flush above left with nothing to do: it must not run, for it would
	// take the trail's lock, and a read finding it held records a pending
	// row instead — and arms another run, which the next read may find
	// holding the lock: on a loaded machine 13 of 21 reads went so.
	const gets = 20
	for i := range gets {
		if tp, err := e.Saver.GetTuple(ctx, cfg); err != nil || tp == nil {
			t.Fatalf("GetTuple %d = %v, %v", i, tp, err)
		}
	}
	listed := 0
	for tp, err := range e.Saver.List(ctx, &checkpointer.Config{ThreadID: "direct"}, checkpointer.ListOptions{Limit: 10}) {
		if err != nil {
			t.Fatal(err)
		}
		if tp != nil {
			listed++
		}
	}
	if listed != 1 {
		t.Fatalf("List yielded %d tuples, want 1", listed)
	}
	// Chains any read recorded as a pending row, so that it is counted.
	if err := e.Trail.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	all, direct := readRecords(t, e.Trail, "direct")
	if all != gets+1 || direct != gets+1 {
		t.Fatalf("%d reads alone in flight: %d records, %d chained by the read itself; want %d, all chained so", gets+1, all, direct, gets+1)
	}
	if _, err := e.Trail.Verify(ctx); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d reads alone in flight: %d chained by the read itself", gets+1, direct)
}

// runChainedRace runs readers through trails of their own on the same
// storage — as processes would, each knowing a head the others move — and
// a writer through a fourth, all at once: every read chains its record or,
// when another trail took its place, records it as before, so each read
// and write has exactly one record and the trail verifies (a read's
// record chained after a head another trail already extended would fork
// the chain: Verify fails).
func runChainedRace(t *testing.T, open func(t *testing.T) InTx) {
	e := open(t)
	ctx := context.Background()
	const readers, each, puts = 3, 200, 100
	type reader struct {
		saver checkpointer.Saver
		trail *audit.Trail
	}
	rs := make([]reader, readers)
	for i := range rs {
		tr, err := InTxTrail(e.Table)
		if err != nil {
			t.Fatal(err)
		}
		rs[i] = reader{audit.NewSaver(e.Inner, tr, nil), tr}
	}
	cfg, err := e.Saver.Put(ctx, checkpointer.Config{ThreadID: "race"}, checkpoint(1), checkpointer.Metadata{}, map[string]string{"a": "1"})
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range rs {
		// Each trail's first append makes its head known; after it, its
		// reads chain themselves unless another trail moved the head.
		if _, err := r.saver.Put(ctx, checkpointer.Config{ThreadID: fmt.Sprintf("race-%d", i)}, checkpoint(1), checkpointer.Metadata{}, map[string]string{"a": "1"}); err != nil {
			t.Fatal(err)
		}
		if err := r.trail.Flush(ctx); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	errs := make(chan error, 2*readers+1)
	for i, r := range rs {
		// Two goroutines a trail: their reads overlap at times (records
		// shared in one pending row, chained as a batch's row by the
		// trail's chainer) and run alone at others (chained by the read).
		for range 2 {
			wg.Go(func() {
				target := fmt.Sprintf("race-%d", i)
				for range each / 2 {
					if tp, err := r.saver.GetTuple(ctx, checkpointer.Config{ThreadID: target}); err != nil || tp == nil {
						errs <- fmt.Errorf("reader %d: GetTuple = %v, %v", i, tp, err)
						return
					}
				}
			})
		}
	}
	wg.Go(func() {
		c := cfg
		for j := range puts {
			var err error
			if c, err = e.Saver.Put(ctx, c, checkpoint(j+2), checkpointer.Metadata{}, map[string]string{"a": fmt.Sprint(j + 2)}); err != nil {
				errs <- fmt.Errorf("writer: %w", err)
				return
			}
		}
	})
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	for _, r := range rs {
		if err := r.trail.Flush(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.Trail.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Trail.Verify(ctx); err != nil {
		t.Fatalf("Verify after reads of %d trails at once: %v", readers, err)
	}
	chained := 0
	for i := range rs {
		all, direct := readRecords(t, e.Trail, fmt.Sprintf("race-%d", i))
		if all != each {
			t.Fatalf("reader %d: %d records of %d reads", i, all, each)
		}
		chained += direct
	}
	if n := writeRecords(t, e.Trail, audit.OpCheckpointWrite)["race"]; n != puts+1 {
		t.Fatalf("%d records of %d puts", n, puts+1)
	}
	t.Logf("%d reads of %d trails at once: %d chained by the read itself, the others as pending records", readers*each, readers, chained)
}

// runSharedRows checks that concurrent reads' records share rows of the
// chain (a batch of them is one pending row and one chained row, not one
// each), that each read still has its own record, which verifies, and
// that editing a record kept in a batch row fails Verify.
func runSharedRows(t *testing.T, open func(t *testing.T) InTx) {
	e := open(t)
	if e.ChainRows == nil || e.EditBatches == nil {
		t.Skip("the storage cannot count or edit the chain's rows")
	}
	ctx := context.Background()
	cfg, err := e.Saver.Put(ctx, checkpointer.Config{ThreadID: "shared"}, checkpoint(1), checkpointer.Metadata{}, map[string]string{"a": "1"})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Trail.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	before := e.ChainRows(t)
	const readers, each = 16, 25
	var wg sync.WaitGroup
	errs := make(chan error, readers)
	for range readers {
		wg.Go(func() {
			for range each {
				if tp, err := e.Saver.GetTuple(ctx, cfg); err != nil || tp == nil {
					errs <- fmt.Errorf("GetTuple = %v, %v", tp, err)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if n := writeRecords(t, e.Trail, audit.OpCheckpointRead)["shared"]; n != readers*each {
		t.Fatalf("%d records of %d reads", n, readers*each)
	}
	rows := e.ChainRows(t) - before
	if rows >= readers*each {
		t.Fatalf("%d reads' records, %d at a time, took %d rows of the chain; want fewer (a batch of concurrent reads' records is one row)",
			readers*each, readers, rows)
	}
	if _, err := e.Trail.Verify(ctx); err != nil {
		t.Fatal(err)
	}
	e.EditBatches(t, `"shared"`, `"shaRed"`)
	if _, err := e.Trail.Verify(ctx); !errors.Is(err, audit.ErrTampered) {
		t.Fatalf("Verify after editing the targets kept in batch rows = %v, want ErrTampered", err)
	}
	e.EditBatches(t, `"shaRed"`, `"shared"`)
	if _, err := e.Trail.Verify(ctx); err != nil {
		t.Fatalf("Verify once the edit is undone: %v", err)
	}
	t.Logf("%d reads, %d at a time: %d rows of the chain", readers*each, readers, rows)
}

// ReadCheckpointsUntilKilled is the body of the process
// KillCheckpointReader kills: 16 goroutines read through s (audited)
// threads of their own, by GetTuple and, every fourth, List, printing
// "ack <thread>" after each read returned. It returns only when a read
// fails.
func ReadCheckpointsUntilKilled(s checkpointer.Saver) error {
	return readUntilKilled(s, killWriters, checkpointer.ListOptions{})
}

// ReadCheckpointsAloneUntilKilled is ReadCheckpointsUntilKilled with one
// reader, whose listings are of ten checkpoints at most: alone in
// flight, on a saver that can, each read carries its record in its own
// statement (checkpointer.WithReadRecord), so a kill lands in those.
func ReadCheckpointsAloneUntilKilled(s checkpointer.Saver) error {
	return readUntilKilled(s, 1, checkpointer.ListOptions{Limit: 10})
}

// readUntilKilled runs readers readers, each getting and listing (with
// opt) threads of its own, acknowledging each read on stdout.
func readUntilKilled(s checkpointer.Saver, readers int, opt checkpointer.ListOptions) error {
	ctx := audit.WithPrincipal(context.Background(), "kill-reader")
	errs := make(chan error, readers)
	for w := range readers {
		go func() {
			for i := 0; ; i++ {
				thread := fmt.Sprintf("r%d-%d", w, i)
				var err error
				if i%4 == 3 {
					for _, lerr := range s.List(ctx, &checkpointer.Config{ThreadID: thread}, opt) {
						if lerr != nil {
							err = lerr
							break
						}
					}
				} else {
					_, err = s.GetTuple(ctx, checkpointer.Config{ThreadID: thread})
				}
				if err == nil {
					_, err = os.Stdout.WriteString("ack " + thread + "\n")
				}
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	return <-errs
}

// KillCheckpointReader kills (SIGKILL) child, a process running
// ReadCheckpointsUntilKilled, once it acknowledged acks reads, and checks
// what open returns then: the trail verifies as the killed process left it
// (pending records included), and once those are chained, every
// acknowledged read has exactly one record.
func KillCheckpointReader(t *testing.T, child *childproc.Child, acks int, open func(t *testing.T) InTx) {
	t.Helper()
	acked := killAfterAcks(t, child, acks, "reader")
	e := open(t)
	ctx := context.Background()
	before, err := e.Trail.Check(ctx, nil)
	if err != nil {
		t.Fatalf("after the kill, before chaining: Check = %+v, %v", before, err)
	}
	reads := writeRecords(t, e.Trail, audit.OpCheckpointRead) // chains what was left pending
	rep, err := e.Trail.Check(ctx, nil)
	if err != nil || rep.Pending != 0 {
		t.Fatalf("after the kill and chaining: Check = %+v, %v", rep, err)
	}
	for _, thread := range acked {
		if reads[thread] != 1 {
			t.Fatalf("acknowledged read of %s: %d records, want 1", thread, reads[thread])
		}
	}
	for thread, n := range reads {
		if n != 1 {
			t.Fatalf("read of %s: %d records, want at most 1", thread, n)
		}
	}
	t.Logf("killed after %d acknowledged reads; %d pending records left, %d records chained", len(acked), before.Pending, rep.Records)
}
