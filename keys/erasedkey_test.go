package keys_test

import (
	"context"
	"testing"

	"github.com/memvault/memvault/keys"
	"github.com/memvault/memvault/keys/memkeys"
	"github.com/memvault/memvault/memvaulttest/testkeys"
)

// erasureReads counts the erasure records read from a real table.
type erasureReads struct {
	*memkeys.Table
	n int
}

func (t *erasureReads) Erasure(ctx context.Context, subject string) (*keys.Erasure, error) {
	t.n++
	return t.Table.Erasure(ctx, subject)
}

// TestErasedKey: ErasedKey names the keys a subject's erasure destroyed
// — still after Readmit, not the subject's new keys nor another
// subject's — and a run over many restored rows under a destroyed key
// reads the erasure record once, not once a row.
func TestErasedKey(t *testing.T) {
	ctx := context.Background()
	table := &erasureReads{Table: memkeys.New()}
	h, err := keys.New(keys.Options{Master: testkeys.Encrypting(t), Table: table, Subjects: keys.Subjects{NamespacePrefix: []string{"users"}}})
	must(t, err)
	first := func(subject string) string {
		t.Helper()
		if _, err := h.SubjectSerializer(ctx, subject, true); err != nil {
			t.Fatal(err)
		}
		id := h.CurrentKeyID(subject)
		if id == "" {
			t.Fatalf("%s has no key", subject)
		}
		return id
	}
	old, bob := first("carol"), first("bob")
	rec, err := h.DestroyKeys(ctx, "carol")
	must(t, err)
	_, err = h.FinishErasure(ctx, "carol")
	must(t, err)
	must(t, h.Readmit(ctx, "carol"))
	h.Evict("carol")
	fresh := first("carol")
	if fresh == old {
		t.Fatalf("readmitted carol got her destroyed key %s again", old)
	}
	for _, c := range []struct {
		subject, id string
		want        bool
	}{{"carol", old, true}, {"carol", fresh, false}, {"carol", bob, false}, {"bob", bob, false}, {"bob", old, false}} {
		if got, err := h.ErasedKey(ctx, c.subject, c.id); err != nil || got != c.want {
			t.Errorf("ErasedKey(%s, %s) = %v, %v; want %v (receipt %v)", c.subject, c.id, got, err, c.want, rec.KeyIDs)
		}
	}
	before := table.n
	for range 1000 {
		if got, err := h.ErasedKey(ctx, "carol", old); err != nil || !got {
			t.Fatalf("ErasedKey(carol, destroyed) = %v, %v", got, err)
		}
	}
	if n := table.n - before; n != 0 {
		t.Errorf("1000 rows under a destroyed key read the erasure record %d times; want 0 more after the first", n)
	}
}
