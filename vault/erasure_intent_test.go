package vault

import (
	"context"
	"strings"
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
	if _, err := h.claimErasure(ctx, "carol"); err != nil { // killed right after
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

// TestUnsignedIntentsLeftAloneAndSettled: an intent row this key did not
// sign — a forged one with a valid number, one signed for another number
// (moved), a session 23 bare-subject row — destroys no key; Open succeeds
// and warns naming the row; a Forget is refused while such an intent is
// neither done nor removed (session 25: it may be another master key's
// real erasure); once the operator removed it, a signed intent after them
// is still finished, and the Open says so.
func TestUnsignedIntentsLeftAloneAndSettled(t *testing.T) {
	ctx := context.Background()
	c := s23Config(t.TempDir())
	h, err := Open(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	for _, th := range []string{"carol:1", "dave:1", "erin:1"} {
		if _, err := putCarolS22(ctx, h, th, th+" notes"); err != nil {
			t.Fatal(err)
		}
	}
	moved := h.Keys.SignIntent(h.keyTableID, 99, "erin", "")
	h.Close()
	db := openRaw(t, c.DBPath)
	for name, value := range map[string]string{
		erasureIntentMark(1): "v3:" + strings.Repeat("0", 64) + "::dave", // forged MAC
		erasureIntentMark(2): moved,                                      // erin's, signed for intent 99
		"subject_erasure_3":  "carol",                                    // session 23's unsigned form
	} {
		if _, err := db.Exec(`INSERT INTO memvault_meta (name, value) VALUES (?, ?)`, name, value); err != nil {
			t.Fatal(err)
		}
	}
	h, err = Open(ctx, c)
	if err != nil {
		t.Fatalf("Open with unsigned intent rows: %v", err)
	}
	warned := strings.Join(h.Warnings, "\n")
	for _, name := range []string{erasureIntentMark(1), erasureIntentMark(2)} {
		if !strings.Contains(warned, name) {
			t.Errorf("no warning names %s: %q", name, warned)
		}
	}
	// A Forget meanwhile is refused, naming the first row: an intent it
	// cannot verify, not done, may be another master key's real erasure,
	// counted in the key table (TestReviewS25bCopySkipsIntentItCannotVerify);
	// the session 23 row is no intent and stops nothing.
	if _, err := h.claimErasure(ctx, "carol"); err == nil || !strings.Contains(err.Error(), erasureIntentMark(1)) {
		t.Fatalf("a claim past a forged intent row: %v, want a refusal naming %s", err, erasureIntentMark(1))
	}
	// The operator deletes the forged row, as the refusal says; the moved
	// one stays, done by the operator's mark.
	if _, err := db.Exec(`DELETE FROM memvault_meta WHERE name = ?`, erasureIntentMark(1)); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`INSERT INTO memvault_meta (name, value) VALUES (?, '1')`, erasureDoneMark(2)); err != nil {
		t.Fatal(err)
	}
	// A Forget killed after its (signed) intent, numbered after the others.
	n, err := h.claimErasure(ctx, "carol")
	if err != nil {
		t.Fatal(err)
	}
	if n != 1 {
		t.Fatalf("carol's intent took number %d, want 1: the key table's count + 1, the forged row gone", n)
	}
	h.Close()
	h, err = Open(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	warned = strings.Join(h.Warnings, "\n")
	if !strings.Contains(warned, `data subject "carol"`) {
		t.Errorf("the Open that finished carol's erasure did not say so: %q", warned)
	}
	for th, want := range map[string]bool{"carol:1": false, "dave:1": true, "erin:1": true} {
		tup, err := h.Saver.GetTuple(ctx, checkpointer.Config{ThreadID: th})
		if got := err == nil && tup != nil; got != want {
			t.Errorf("%s reads: %v (err %v), want %v", th, got, err, want)
		}
	}
}
