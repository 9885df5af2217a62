package vault

import (
	"context"
	"database/sql"
	"errors"
	"testing"

	"github.com/memvault/memvault/keys"
	"github.com/memvault/memvault/reencrypt"
	"github.com/memvault/memvault/serde"
)

// TestReencryptReadmittedSubjectTamperedRowStops: re-encryption leaves a
// readmitted subject's rows sealed under a key its erasure destroyed
// (TestReviewS29ReencryptAfterRestoredBackup), telling them by the key
// their header names. A row of that subject under its live key whose
// bytes were changed is not such a row: the run must still stop on it
// with serde.ErrDecrypt, not leave it as erased.
func TestReencryptReadmittedSubjectTamperedRowStops(t *testing.T) {
	ctx := context.Background()
	c := subjectsConfigOn(t, false)
	h, err := Open(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	s29Put(ctx, t, h, "carol:1", "", "carol notes", nil)
	if r, err := h.Forget(ctx, "carol"); err != nil || r.Pending {
		t.Fatalf("Forget(carol): pending %v, %v", r.Pending, err)
	}
	if err := h.Readmit(ctx, "carol"); err != nil {
		t.Fatal(err)
	}
	s29Put(ctx, t, h, "carol:2", "", "carol again", nil)
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", c.DBPath)
	if err != nil {
		t.Fatal(err)
	}
	// One bit of the sealed value's last byte (its tag), the header
	// and its key id untouched.
	res, err := db.Exec(`UPDATE checkpoint_blobs SET blob = substr(blob, 1, length(blob) - 1) || CAST(char((unicode(substr(blob, -1)) + 1) % 128) AS BLOB) WHERE thread_id = 'carol:2'`)
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		t.Fatalf("%d rows of carol:2 changed, want 1", n)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	rot := c
	rot.Keys.Primary, rot.Keys.Previous = otherKey, []string{c.Keys.Primary}
	if h, err = Open(ctx, rot); err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	_, _, err = h.Reencrypt(ctx, reencrypt.Options{})
	if !errors.Is(err, serde.ErrDecrypt) || errors.Is(err, keys.ErrSubjectErased) {
		t.Errorf("keys reencrypt over a tampered row of a readmitted subject = %v; want serde.ErrDecrypt, not keys.ErrSubjectErased", err)
	}
}
