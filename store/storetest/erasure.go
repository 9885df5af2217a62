package storetest

import (
	"context"
	"errors"
	"testing"

	mvkeys "github.com/memvault/memvault/keys"
	"github.com/memvault/memvault/keys/keystest"
	"github.com/memvault/memvault/keys/memkeys"
	"github.com/memvault/memvault/serde"
	"github.com/memvault/memvault/store"
)

// RunErasure checks that a backend fences puts against erasure: open must
// return a store on the same storage every time it is called, using the
// given serializer (each call stands for another process, with a key cache
// of its own over one shared key table: table, or one in memory when it is
// nil).
//
// Process B puts a subject's item, so that it holds the subject's key in
// its cache; process A destroys the subject's keys. Then B's puts of the
// subject — Put, Batch, PutIf — fail with mvkeys.ErrSubjectErased and store
// nothing, while another subject's go on; and a process that never saw the
// subject cannot put it either.
func RunErasure(t *testing.T, table mvkeys.Table, open func(t *testing.T, s serde.Serializer) store.Store) {
	t.Helper()
	ctx := context.Background()
	if table == nil {
		table = memkeys.New()
	}
	process := func() (*mvkeys.Hierarchy, store.Store) {
		h := keystest.NewHierarchy(t, table, mvkeys.Subjects{NamespacePrefix: []string{"users"}})
		return h, open(t, h)
	}
	carol, dave := store.Namespace{"users", "carol", "notes"}, store.Namespace{"users", "dave", "notes"}
	v := map[string]any{"text": "allergic to peanuts"}
	hA, a := process()
	_, b := process()
	if err := b.Put(ctx, carol, "k1", v); err != nil {
		t.Fatal(err)
	}
	if err := a.Put(ctx, dave, "k1", v); err != nil {
		t.Fatal(err)
	}

	if _, err := hA.StartErasure(ctx, "carol"); err != nil {
		t.Fatal(err)
	}

	if err := b.Put(ctx, carol, "k2", v); !errors.Is(err, mvkeys.ErrSubjectErased) {
		t.Fatalf("a put of an erased subject, from a process holding its key: %v, want mvkeys.ErrSubjectErased", err)
	}
	if _, err := b.Batch(ctx, []store.Op{store.PutOp{Namespace: carol, Key: "k3", Value: v}, store.PutOp{Namespace: dave, Key: "k3", Value: v}}); !errors.Is(err, mvkeys.ErrSubjectErased) {
		t.Fatalf("a batch with a put of an erased subject: %v, want mvkeys.ErrSubjectErased", err)
	}
	if cp, ok := b.(store.ConditionalPutter); ok {
		if err := cp.PutIf(ctx, carol, "k4", v, store.PutCondition{}); !errors.Is(err, mvkeys.ErrSubjectErased) {
			t.Fatalf("a conditional put of an erased subject: %v, want mvkeys.ErrSubjectErased", err)
		}
	}
	for _, key := range []string{"k2", "k3", "k4"} {
		if it, err := a.Get(ctx, carol, key); err != nil || it != nil {
			t.Fatalf("refused put %s was stored: %v, %v", key, it, err)
		}
	}
	if it, err := a.Get(ctx, dave, "k3"); err != nil || it != nil {
		t.Fatalf("the refused batch stored its other put: %v, %v", it, err)
	}
	if err := b.Put(ctx, dave, "k2", v); err != nil {
		t.Fatalf("another subject after the erasure: %v", err)
	}
	_, c := process()
	if err := c.Put(ctx, carol, "k5", v); !errors.Is(err, mvkeys.ErrSubjectErased) {
		t.Fatalf("a new process putting the erased subject: %v, want mvkeys.ErrSubjectErased", err)
	}
}
