package audittest

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/memvault/memvault/audit"
	"github.com/memvault/memvault/store"
)

// StoreInTx is a store on the trail's own database, audited with
// audit.Options.WritesInTx, and the storage hooks RunStoreWritesInTx
// needs.
type StoreInTx struct {
	// Inner is the store, unaudited; Store is it audited in Trail.
	Inner store.Store
	Store store.Store
	Trail *audit.Trail
	// Table is the trail's table.
	Table audit.PendingTable
	// RefuseRecords makes the storage refuse every pending record whose
	// target is target (a constraint, a trigger).
	RefuseRecords func(t *testing.T, target string)
}

// RunStoreWritesInTx checks that an audited store's item writes (Put,
// Delete, PutIf, a Batch that writes) record in their own transaction: a record is stored
// exactly when the write is (a conditional put whose condition fails
// leaves none, a record that cannot be stored fails the write and changes
// nothing), pending records are chained and verify, and a forged pending
// record fails Check and stops the writer.
func RunStoreWritesInTx(t *testing.T, open func(t *testing.T) StoreInTx) {
	ns := store.Namespace{"users", "carol"}
	records := func(t *testing.T, tr *audit.Trail, op string) map[string]int { return writeRecords(t, tr, op) }
	t.Run("put and delete", func(t *testing.T) {
		e := open(t)
		ctx := context.Background()
		if err := e.Store.Put(ctx, ns, "diet", map[string]any{"v": "vegan"}); err != nil {
			t.Fatal(err)
		}
		if err := e.Store.Delete(ctx, ns, "diet"); err != nil {
			t.Fatal(err)
		}
		rep, err := e.Trail.Check(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		if n := records(t, e.Trail, audit.OpItemWrite)["users.carol/diet"]; n != 1 {
			t.Fatalf("a put: %d records, want 1", n)
		}
		if n := records(t, e.Trail, audit.OpItemDelete)["users.carol/diet"]; n != 1 {
			t.Fatalf("a delete: %d records, want 1", n)
		}
		after, err := e.Trail.Check(ctx, nil)
		if err != nil || after.Records != 2 || after.Pending != 0 {
			t.Fatalf("Check = %+v, %v; want 2 records, none pending (before chaining: %d pending)", after, err, rep.Pending)
		}
	})
	t.Run("a conditional put that does not write leaves no record", func(t *testing.T) {
		e := open(t)
		ctx := context.Background()
		c, ok := e.Store.(store.ConditionalPutter)
		if !ok {
			t.Skip("no conditional puts")
		}
		if err := c.PutIf(ctx, ns, "k", map[string]any{"v": 1}, store.PutCondition{}); err != nil {
			t.Fatal(err)
		}
		// Absent is required, and it is there: nothing is written.
		if err := c.PutIf(ctx, ns, "k", map[string]any{"v": 2}, store.PutCondition{}); !errors.Is(err, store.ErrConflict) {
			t.Fatalf("PutIf of a present item with absent required = %v, want ErrConflict", err)
		}
		if n := records(t, e.Trail, audit.OpItemWrite)["users.carol/k"]; n != 1 {
			t.Fatalf("%d records of conditional puts, want 1 (the one that wrote)", n)
		}
	})
	t.Run("a record that fails fails its write", func(t *testing.T) {
		e := open(t)
		ctx := context.Background()
		if err := e.Store.Put(ctx, ns, "kept", map[string]any{"v": 1}); err != nil {
			t.Fatal(err)
		}
		if err := e.Trail.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		e.RefuseRecords(t, "users.carol/kept")
		e.RefuseRecords(t, "users.carol/new")
		if err := e.Store.Put(ctx, ns, "new", map[string]any{"v": 1}); err == nil {
			t.Fatal("a put whose record is refused succeeded")
		}
		if err := e.Store.Delete(ctx, ns, "kept"); err == nil {
			t.Fatal("a delete whose record is refused succeeded")
		}
		if it, err := e.Inner.Get(ctx, ns, "new"); err != nil || it != nil {
			t.Fatalf("the put whose record was refused stored %v (%v)", it, err)
		}
		if it, err := e.Inner.Get(ctx, ns, "kept"); err != nil || it == nil {
			t.Fatalf("the delete whose record was refused deleted the item (%v)", err)
		}
		if _, err := e.Trail.Verify(ctx); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("a batch records in its transaction", func(t *testing.T) {
		e := open(t)
		ctx := context.Background()
		if err := e.Store.Put(ctx, ns, "old", map[string]any{"v": 1}); err != nil {
			t.Fatal(err)
		}
		if _, err := e.Store.Batch(ctx, []store.Op{
			store.PutOp{Namespace: ns, Key: "batch-new", Value: map[string]any{"v": 2}},
			store.GetOp{Namespace: ns, Key: "old"},
			store.PutOp{Namespace: ns, Key: "old"}, // a delete
		}); err != nil {
			t.Fatal(err)
		}
		if n := records(t, e.Trail, audit.OpItemWrite)["users.carol/batch-new"]; n != 1 {
			t.Fatalf("the batch's put: %d records, want 1", n)
		}
		if n := records(t, e.Trail, audit.OpItemRead)["users.carol/old"]; n != 1 {
			t.Fatalf("the batch's get: %d records, want 1", n)
		}
		if n := records(t, e.Trail, audit.OpItemDelete)["users.carol/old"]; n != 1 {
			t.Fatalf("the batch's delete: %d records, want 1", n)
		}
		if _, err := e.Trail.Verify(ctx); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("a batch that fails leaves no record", func(t *testing.T) {
		// Before, the records were appended first: a batch refused
		// (here, a value that cannot be encoded) left records of writes
		// that never happened.
		e := open(t)
		ctx := context.Background()
		if _, err := e.Store.Batch(ctx, []store.Op{
			store.PutOp{Namespace: ns, Key: "fine", Value: map[string]any{"v": 1}},
			store.PutOp{Namespace: ns, Key: "unencodable", Value: map[string]any{"v": make(chan int)}},
		}); err == nil {
			t.Fatal("a batch with an unencodable value succeeded")
		}
		if n := len(records(t, e.Trail, audit.OpItemWrite)); n != 0 {
			t.Fatalf("the refused batch left %d records of writes, want none", n)
		}
	})
	t.Run("a batch whose record fails writes nothing", func(t *testing.T) {
		e := open(t)
		ctx := context.Background()
		e.RefuseRecords(t, "users.carol/refused")
		if _, err := e.Store.Batch(ctx, []store.Op{
			store.PutOp{Namespace: ns, Key: "fine", Value: map[string]any{"v": 1}},
			store.PutOp{Namespace: ns, Key: "refused", Value: map[string]any{"v": 1}},
		}); err == nil {
			t.Fatal("a batch whose record is refused succeeded")
		}
		for _, k := range []string{"fine", "refused"} {
			if it, err := e.Inner.Get(ctx, ns, k); err != nil || it != nil {
				t.Fatalf("the batch whose record was refused stored %s: %v (%v)", k, it, err)
			}
		}
		if n := len(records(t, e.Trail, audit.OpItemWrite)); n != 0 {
			t.Fatalf("the refused batch left %d records of writes, want none", n)
		}
	})
	t.Run("a forged pending record", func(t *testing.T) {
		e := open(t)
		ctx := context.Background()
		if err := e.Trail.Log(ctx, audit.OpItemRead, "before", "", ""); err != nil {
			t.Fatal(err)
		}
		forged := audit.Pending{ID: "0123456789abcdef0123456789abcdef", Time: time.Now().UTC().Truncate(time.Microsecond),
			Op: audit.OpItemWrite, Target: "forged", MAC: strings.Repeat("a", 16) + ":" + strings.Repeat("b", 64)}
		if err := e.Table.AddPending(ctx, []audit.Pending{forged}); err != nil {
			t.Fatal(err)
		}
		if _, err := e.Trail.Check(ctx, nil); !errors.Is(err, audit.ErrTampered) {
			t.Fatalf("Check with a forged pending record = %v, want ErrTampered", err)
		}
		if err := e.Trail.Flush(ctx); !errors.Is(err, audit.ErrTampered) {
			t.Fatalf("chaining a forged pending record = %v, want ErrTampered", err)
		}
		if err := e.Store.Put(ctx, ns, "after", map[string]any{"v": 1}); !errors.Is(err, audit.ErrTampered) {
			t.Fatalf("a put after the chainer refused the trail = %v, want ErrTampered", err)
		}
	})
}
