package vault

import (
	"context"
	"testing"

	"github.com/memvault/memvault/checkpointer"
)

// TestErasureIntentFinishedAtOpen: a Forget killed after it recorded its
// intent in the data database and before the key table's transaction
// leaves the subject's keys live and the table's count unchanged; the next
// Open finishes the erasure in the key table (carol's values no longer
// decrypt, a new write of hers is refused) and counts it, so a key table
// backup from before is refused afterwards. Without the intent the
// erasure was lost with the killed process.
func TestErasureIntentFinishedAtOpen(t *testing.T) {
	ctx := context.Background()
	c := s23Config(t.TempDir())
	h, err := Open(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := putCarolS22(ctx, h, "carol:1", "carol takes insulin"); err != nil {
		t.Fatal(err)
	}
	if _, err := putCarolS22(ctx, h, "dave:1", "dave takes nothing"); err != nil {
		t.Fatal(err)
	}
	before, err := h.keyTable.Erasures(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := claimErasure(ctx, h.erasureMarks, h.keyTable, "carol"); err != nil { // killed right after
		t.Fatal(err)
	}
	h.Close()

	h, err = Open(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if tup, err := h.Saver.GetTuple(ctx, checkpointer.Config{ThreadID: "carol:1"}); err == nil && tup != nil {
		t.Fatalf("after a Forget(carol) killed once its intent was recorded, Open left carol's keys: carol:1 reads back %q", tup.Checkpoint.ChannelValues["notes"])
	}
	if got, err := putCarolS22(ctx, h, "carol:2", "again"); err == nil {
		t.Fatalf("carol:2 written and read back after the finished erasure: %q", got)
	}
	if got, err := putCarolS22(ctx, h, "dave:2", "dave is fine"); err != nil || got != "dave is fine" {
		t.Fatalf("dave, not erased: %q, %v", got, err)
	}
	after, err := h.keyTable.Erasures(ctx)
	if err != nil {
		t.Fatal(err)
	}
	seen, err := markCount(ctx, h.erasureMarks, keyErasuresMark)
	if err != nil {
		t.Fatal(err)
	}
	if after <= before || seen != after {
		t.Fatalf("key table counts %d erasures (before %d), the database has seen %d: want the finished one counted on both", after, before, seen)
	}
	// A second Open finds nothing more to finish.
	h2, err := Open(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	h2.Close()
	if n, _ := h.keyTable.Erasures(ctx); n != after {
		t.Fatalf("a second Open counted %d erasures, want %d: it erased again", n, after)
	}
}
