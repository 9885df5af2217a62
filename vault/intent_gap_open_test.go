package vault

import (
	"context"
	"testing"

	"github.com/memvault/memvault/keys"
)

// TestOpenFinishedIntentPastGap: TestReviewS25IntentGapRefusesReadmittedSubject
// through Open's path. A row planted at intent number 1 makes a Forget's
// claim take number 2; the Forget is killed after its claim, and the next
// Open finishes it (the operator then runs forget again, as its warning
// says, and readmits carol). The guard's record it writes must be the key table's
// count after that erasure (1), not the intent number (2): else, once
// carol is readmitted, every write of carol on the live key table is
// refused as a copy's.
func TestOpenFinishedIntentPastGap(t *testing.T) {
	ctx := context.Background()
	c := s23Config(t.TempDir())
	h, err := Open(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := putCarolS22(ctx, h, "carol:1", "carol's records"); err != nil {
		t.Fatal(err)
	}
	h.Close()
	if _, err := openRaw(t, c.DBPath).Exec(`INSERT INTO memvault_meta (name, value) VALUES (?, 'x')`, erasureIntentMark(1)); err != nil {
		t.Fatal(err)
	}
	worker, err := Open(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	n, err := worker.claimErasure(ctx, "carol") // Forget(carol) killed right after
	if err != nil {
		t.Fatal(err)
	}
	worker.Close()
	if n != 2 {
		t.Fatalf("carol's intent took number %d, want 2 (1 is planted)", n)
	}
	if h, err = Open(ctx, c); err != nil { // finishes carol's erasure
		t.Fatal(err)
	}
	defer h.Close()
	if _, err := h.Forget(ctx, "carol"); err != nil { // as Open's warning says: deletes the rows
		t.Fatal(err)
	}
	if err := h.Readmit(ctx, "carol"); err != nil {
		t.Fatal(err)
	}
	if _, err := putCarolS22(ctx, h, "carol:2", "carol is back"); err != nil {
		mark, _, _ := h.erasureMarks.MarkValue(ctx, keys.ErasedSubjectMark("carol"))
		have, _ := h.keyTable.Erasures(ctx)
		t.Fatalf("carol readmitted after Open finished her erasure: her put is refused (erased_subject:carol = %s, the key table counts %d): %v", mark, have, err)
	}
}
