package audittest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/memvault/memvault/audit"
	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/memvaulttest/childproc"
)

// InTx is a saver on the trail's own database, audited with
// audit.Options.WritesInTx, and the storage hooks RunWritesInTx needs.
type InTx struct {
	// Inner is the saver, unaudited; Saver is it audited in Trail.
	Inner checkpointer.Saver
	Saver checkpointer.Saver
	Trail *audit.Trail
	// Table is the trail's table.
	Table audit.PendingTable
	// RemoveCheckpoint deletes a checkpoint row through the storage,
	// behind the saver's back (as a concurrent prune would).
	RemoveCheckpoint func(t *testing.T, thread, id string)
	// RefuseRecords makes the storage refuse every pending record whose
	// target is target (a constraint, a trigger): a write carrying one
	// fails.
	RefuseRecords func(t *testing.T, target string)
	// BlockChain, when the storage can, holds off every append to the
	// chain (pending records still commit) until the returned function
	// is called; nil when it cannot (SQLite: one writer for both).
	BlockChain func(t *testing.T) (release func())
	// ChainRows counts the rows of the chain's table (not its records:
	// a row may hold a batch of them); nil when the storage cannot.
	ChainRows func(t *testing.T) int
	// EditBatches replaces from by to in the stored records of every
	// row holding a batch (its more column), as whoever can write the
	// table could; nil when the storage cannot.
	EditBatches func(t *testing.T, from, to string)
}

// InTxKey is the audit key of the trails InTx savers use.
var InTxKey = []byte("memvault-audittest-in-transaction-key-32+")

// InTxTrail is the trail of table that the suite expects: WritesInTx, under
// InTxKey.
func InTxTrail(table audit.Table) (*audit.Trail, error) {
	return audit.NewTrail(table, audit.Options{Key: InTxKey, DatabaseID: dbID, WritesInTx: true})
}

// checkpoint is a one-channel checkpoint numbered n.
func checkpoint(n int) *checkpointer.Checkpoint {
	return &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(n), TS: time.Now(),
		ChannelValues: map[string]any{"a": fmt.Sprint(n)}, ChannelVersions: map[string]string{"a": fmt.Sprint(n)}}
}

// writeRecords returns how many records of op the chain holds per target,
// after chaining every pending record.
func writeRecords(t *testing.T, tr *audit.Trail, op string) map[string]int {
	t.Helper()
	ctx := context.Background()
	if err := tr.Flush(ctx); err != nil {
		t.Fatalf("Flush: %v", err)
	}
	n := map[string]int{}
	if err := tr.Records(ctx, audit.Filter{}, func(r audit.Record) error {
		if r.Op == op {
			n[r.Target]++
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return n
}

// RunWritesInTx checks that an audited write records in its own
// transaction: its record is stored exactly when the write is (a write
// that fails leaves no record, a record that cannot be stored fails the
// write), pending records are chained and verify, and a forged pending
// record fails Check and stops the writer.
func RunWritesInTx(t *testing.T, open func(t *testing.T) InTx) {
	t.Run("put", func(t *testing.T) {
		e := open(t)
		ctx := context.Background()
		if _, err := e.Saver.Put(ctx, checkpointer.Config{ThreadID: "ok"}, checkpoint(1), checkpointer.Metadata{}, map[string]string{"a": "1"}); err != nil {
			t.Fatal(err)
		}
		if err := e.Saver.PutWrites(ctx, checkpointer.Config{ThreadID: "ok", CheckpointID: "x"}, []checkpointer.Write{{Channel: "c", Value: 1}}, "task", ""); err != nil {
			t.Fatal(err)
		}
		if n := writeRecords(t, e.Trail, audit.OpCheckpointWrite)["ok"]; n != 1 {
			t.Fatalf("a put: %d records, want 1", n)
		}
		if n := writeRecords(t, e.Trail, audit.OpWritesWrite)["ok"]; n != 1 {
			t.Fatalf("a put_writes: %d records, want 1", n)
		}
		rep, err := e.Trail.Check(ctx, nil)
		if err != nil || rep.Records != 2 || rep.Pending != 0 {
			t.Fatalf("Check = %+v, %v; want 2 records, none pending", rep, err)
		}
	})
	t.Run("a put that stores nothing leaves no record", func(t *testing.T) {
		e := open(t)
		ctx := context.Background()
		cp1 := checkpoint(1)
		cfg, err := e.Saver.Put(ctx, checkpointer.Config{ThreadID: "orphan"}, cp1, checkpointer.Metadata{}, map[string]string{"a": "1"})
		if err != nil {
			t.Fatal(err)
		}
		e.RemoveCheckpoint(t, "orphan", cp1.ID)
		// cp2 inherits channel a from cp1, which is gone.
		cp2 := checkpoint(1)
		cp2.ChannelValues["b"], cp2.ChannelVersions["b"] = "b", "1"
		if _, err := e.Saver.Put(ctx, cfg, cp2, checkpointer.Metadata{}, map[string]string{"b": "1"}); !errors.Is(err, checkpointer.ErrParentMissing) {
			t.Fatalf("a put whose parent is gone = %v, want ErrParentMissing", err)
		}
		if n := writeRecords(t, e.Trail, audit.OpCheckpointWrite)["orphan"]; n != 1 {
			t.Fatalf("%d records of puts on the thread, want 1 (the put that stored nothing has none)", n)
		}
	})
	t.Run("a record that fails fails its write", func(t *testing.T) {
		e := open(t)
		ctx := context.Background()
		cp := checkpoint(1)
		cfg, err := e.Saver.Put(ctx, checkpointer.Config{ThreadID: "w"}, cp, checkpointer.Metadata{}, map[string]string{"a": "1"})
		if err != nil {
			t.Fatal(err)
		}
		if err := e.Trail.Flush(ctx); err != nil { // the put's record is no longer pending
			t.Fatal(err)
		}
		e.RefuseRecords(t, "w")
		e.RefuseRecords(t, "p")
		if _, err := e.Saver.Put(ctx, checkpointer.Config{ThreadID: "p"}, checkpoint(2), checkpointer.Metadata{}, map[string]string{"a": "2"}); err == nil {
			t.Fatal("a put whose record is refused succeeded")
		}
		if err := e.Saver.PutWrites(ctx, cfg, []checkpointer.Write{{Channel: "c", Value: 1}}, "task", ""); err == nil {
			t.Fatal("a put_writes whose record is refused succeeded")
		}
		if tp, err := e.Inner.GetTuple(ctx, checkpointer.Config{ThreadID: "p"}); err != nil || tp != nil {
			t.Fatalf("the put whose record was refused stored %v (%v)", tp, err)
		}
		tp, err := e.Inner.GetTuple(ctx, cfg)
		if err != nil || tp == nil || len(tp.PendingWrites) != 0 {
			t.Fatalf("the put_writes whose record was refused stored %v (%v)", tp, err)
		}
		if _, err := e.Trail.Verify(ctx); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("a read whose record is refused returns nothing", func(t *testing.T) {
		// Reads one at a time: each carries its record in its own
		// transaction where the saver can (checkpointer.ReadRecorder),
		// else commits it with the readers' group. Either way, a record
		// that cannot be stored fails the read.
		e := open(t)
		ctx := context.Background()
		cp := checkpoint(1)
		if _, err := e.Inner.Put(ctx, checkpointer.Config{ThreadID: "r"}, cp, checkpointer.Metadata{}, map[string]string{"a": "1"}); err != nil {
			t.Fatal(err)
		}
		e.RefuseRecords(t, "r")
		for _, cfg := range []checkpointer.Config{{ThreadID: "r"}, {ThreadID: "r", CheckpointID: cp.ID}} {
			if tp, err := e.Saver.GetTuple(ctx, cfg); err == nil || tp != nil {
				t.Fatalf("GetTuple(%+v) whose record is refused = %v, %v; want no tuple and an error", cfg, tp, err)
			}
		}
		for _, opt := range []checkpointer.ListOptions{{Limit: 10}, {}} {
			var got, errs int
			for tp, err := range e.Saver.List(ctx, &checkpointer.Config{ThreadID: "r"}, opt) {
				if err != nil {
					errs++
				} else if tp != nil {
					got++
				}
			}
			if got != 0 || errs != 1 {
				t.Fatalf("List(%+v) whose record is refused yielded %d tuples and %d errors, want none and one", opt, got, errs)
			}
		}
		if _, err := e.Trail.Verify(ctx); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("a read's record is durable when the read returns", func(t *testing.T) {
		e := open(t)
		ctx := audit.WithPrincipal(context.Background(), "reader")
		cp := checkpoint(1)
		if _, err := e.Inner.Put(ctx, checkpointer.Config{ThreadID: "r"}, cp, checkpointer.Metadata{}, map[string]string{"a": "1"}); err != nil {
			t.Fatal(err)
		}
		if tp, err := e.Saver.GetTuple(ctx, checkpointer.Config{ThreadID: "r"}); err != nil || tp == nil {
			t.Fatalf("GetTuple = %v, %v", tp, err)
		}
		if tp, err := e.Saver.GetTuple(ctx, checkpointer.Config{ThreadID: "r", CheckpointID: cp.ID}); err != nil || tp == nil {
			t.Fatalf("GetTuple by id = %v, %v", tp, err)
		}
		for _, opt := range []checkpointer.ListOptions{{Limit: 10}, {}} {
			n := 0
			for tp, err := range e.Saver.List(ctx, &checkpointer.Config{ThreadID: "r"}, opt) {
				if err != nil {
					t.Fatal(err)
				}
				if tp != nil {
					n++
				}
			}
			if n != 1 {
				t.Fatalf("List(%+v) yielded %d tuples, want 1", opt, n)
			}
		}
		// Another trail on the table (another process's) chains what
		// was committed: the four reads' records, by their principal.
		other, err := InTxTrail(e.Table)
		if err != nil {
			t.Fatal(err)
		}
		if err := other.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		n := 0
		if err := other.Records(ctx, audit.Filter{}, func(r audit.Record) error {
			if r.Op == audit.OpCheckpointRead && r.Target == "r" && r.Principal == "reader" {
				n++
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if n != 4 {
			t.Fatalf("%d records of the four reads, want 4", n)
		}
		if _, err := other.Verify(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := e.Trail.Verify(ctx); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("a forged pending record", func(t *testing.T) {
		e := open(t)
		ctx := context.Background()
		if err := e.Trail.Log(ctx, audit.OpItemRead, "before", "", ""); err != nil {
			t.Fatal(err)
		}
		forged := audit.Pending{ID: "0123456789abcdef0123456789abcdef", Time: time.Now().UTC().Truncate(time.Microsecond),
			Op: audit.OpCheckpointWrite, Target: "forged", MAC: strings.Repeat("a", 16) + ":" + strings.Repeat("b", 64)}
		if err := e.Table.AddPending(ctx, []audit.Pending{forged}); err != nil {
			t.Fatal(err)
		}
		if _, err := e.Trail.Check(ctx, nil); !errors.Is(err, audit.ErrTampered) {
			t.Fatalf("Check with a forged pending record = %v, want ErrTampered", err)
		}
		if err := e.Trail.Flush(ctx); !errors.Is(err, audit.ErrTampered) {
			t.Fatalf("chaining a forged pending record = %v, want ErrTampered", err)
		}
		if _, err := e.Saver.Put(ctx, checkpointer.Config{ThreadID: "after"}, checkpoint(1), checkpointer.Metadata{}, map[string]string{"a": "1"}); !errors.Is(err, audit.ErrTampered) {
			t.Fatalf("a put after the chainer refused the trail = %v, want ErrTampered", err)
		}
		// Reads alone in flight (their records in their own
		// transactions, where the saver can) are refused too.
		if tp, err := e.Saver.GetTuple(ctx, checkpointer.Config{ThreadID: "before"}); !errors.Is(err, audit.ErrTampered) || tp != nil {
			t.Fatalf("a read after the chainer refused the trail = %v, %v; want ErrTampered", tp, err)
		}
		n := 0
		for tp, err := range e.Saver.List(ctx, &checkpointer.Config{ThreadID: "before"}, checkpointer.ListOptions{Limit: 10}) {
			if !errors.Is(err, audit.ErrTampered) || tp != nil {
				t.Fatalf("a listing after the chainer refused the trail yielded %v, %v; want ErrTampered", tp, err)
			}
			n++
		}
		if n != 1 {
			t.Fatalf("a listing after the chainer refused the trail yielded %d errors, want 1", n)
		}
	})
}

// WriteCheckpointsUntilKilled is the body of the process
// KillCheckpointWriter kills: 16 goroutines put checkpoints (each on a
// thread of its own) and, every third, its writes, through s (audited,
// recording in the writes' transactions), printing "ack put <thread>" and
// "ack writes <thread>" after each returned. It returns only when a write
// fails.
func WriteCheckpointsUntilKilled(s checkpointer.Saver) error {
	ctx := audit.WithPrincipal(context.Background(), "kill-writer")
	errs := make(chan error, killWriters)
	for w := range killWriters {
		go func() {
			for i := 0; ; i++ {
				thread := fmt.Sprintf("k%d-%d", w, i)
				cfg, err := s.Put(ctx, checkpointer.Config{ThreadID: thread}, checkpoint(i), checkpointer.Metadata{}, map[string]string{"a": fmt.Sprint(i)})
				if err == nil {
					_, err = os.Stdout.WriteString("ack put " + thread + "\n")
				}
				if err == nil && i%3 == 0 {
					if err = s.PutWrites(ctx, cfg, []checkpointer.Write{{Channel: "c", Value: i}}, "task", ""); err == nil {
						_, err = os.Stdout.WriteString("ack writes " + thread + "\n")
					}
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

// KillCheckpointWriter kills (SIGKILL) child, a process running
// WriteCheckpointsUntilKilled, once it acknowledged acks writes, and checks
// what open returns then: after chaining what the killed process left
// pending, the trail verifies, every acknowledged write is stored with
// exactly one record, and every record of a write names a write that is
// stored (no record of a write that did not commit).
func KillCheckpointWriter(t *testing.T, child *childproc.Child, acks int, open func(t *testing.T) InTx) {
	t.Helper()
	acked := killAfterAcks(t, child, acks, "writer")
	e := open(t)
	ctx := context.Background()
	before, err := e.Trail.Check(ctx, nil)
	if err != nil {
		t.Fatalf("after the kill, before chaining: Check = %+v, %v", before, err)
	}
	puts := writeRecords(t, e.Trail, audit.OpCheckpointWrite) // chains what was left pending
	writes := writeRecords(t, e.Trail, audit.OpWritesWrite)
	rep, err := e.Trail.Check(ctx, nil)
	if err != nil || rep.Pending != 0 {
		t.Fatalf("after the kill and chaining: Check = %+v, %v", rep, err)
	}
	stored := func(thread string) *checkpointer.Tuple {
		tp, err := e.Inner.GetTuple(ctx, checkpointer.Config{ThreadID: thread})
		if err != nil {
			t.Fatal(err)
		}
		return tp
	}
	for _, a := range acked {
		kind, thread, _ := strings.Cut(a, " ")
		switch kind {
		case "put":
			if puts[thread] != 1 || stored(thread) == nil {
				t.Fatalf("acknowledged put on %s: %d records, stored %v", thread, puts[thread], stored(thread) != nil)
			}
		case "writes":
			if tp := stored(thread); writes[thread] != 1 || tp == nil || len(tp.PendingWrites) != 1 {
				t.Fatalf("acknowledged put_writes on %s: %d records, stored %v", thread, writes[thread], tp)
			}
		}
	}
	var mu sync.Mutex
	check := func(recs map[string]int, what string, has func(*checkpointer.Tuple) bool) {
		for thread, n := range recs {
			mu.Lock()
			tp := stored(thread)
			mu.Unlock()
			if n != 1 || tp == nil || !has(tp) {
				t.Fatalf("%d records of a %s on %s, which stored %v", n, what, thread, tp)
			}
		}
	}
	check(puts, "put", func(*checkpointer.Tuple) bool { return true })
	check(writes, "put_writes", func(tp *checkpointer.Tuple) bool { return len(tp.PendingWrites) == 1 })
	t.Logf("killed after %d acknowledged writes; %d pending records left, %d records chained", len(acked), before.Pending, rep.Records)
}
