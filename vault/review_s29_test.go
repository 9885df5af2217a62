package vault

import (
	"bytes"
	"context"
	"errors"
	"testing"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/checkpointer/threadfile"
	"github.com/memvault/memvault/keys"
)

// s29Put puts one checkpoint of thread after parent ("" for the first),
// holding notes, with metadata md, and returns its id.
func s29Put(ctx context.Context, t *testing.T, h *Handle, thread, parent, notes string, md checkpointer.Metadata) string {
	t.Helper()
	cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(0), ChannelValues: map[string]any{"notes": notes},
		ChannelVersions: map[string]string{"notes": h.Saver.NextVersion("")}}
	if _, err := h.Saver.Put(ctx, checkpointer.Config{ThreadID: thread, CheckpointID: parent}, cp, md, cp.ChannelVersions); err != nil {
		t.Fatalf("Put(%s): %v", thread, err)
	}
	return cp.ID
}

// TestReviewS29ImportOfErasedSubjectsDump (session 29 review, attack that
// held): `memvault threads export` of a subject's thread taken before
// `forget`, imported again afterwards (`threads import`, a careless
// restore of "lost" threads), is refused with keys.ErrSubjectErased and
// stores nothing — with subjects by thread id, and with subjects by
// metadata for a thread that ran anonymous before naming carol (its
// first line names no subject, so only the later one can refuse it, and
// the import is one unit). README, Erasure step 2: "S stays erased: no
// key is made for S again … until memvault keys readmit S".
func TestReviewS29ImportOfErasedSubjectsDump(t *testing.T) {
	ctx := context.Background()
	for _, backend := range []string{"sqlite", "postgres"} {
		for _, mode := range []string{"thread-id", "metadata"} {
			t.Run(backend+"/"+mode, func(t *testing.T) {
				c := subjectsConfigOn(t, backend == "postgres")
				thread := "carol:1"
				if mode == "metadata" {
					c.Subjects.ThreadSeparator = ""
					c.Subjects.ThreadMetadataKey = "user_id"
					thread = "visit"
				}
				h, err := Open(ctx, c)
				if err != nil {
					t.Fatal(err)
				}
				defer h.Close()
				first := s29Put(ctx, t, h, thread, "", "anonymous notes", nil)
				s29Put(ctx, t, h, thread, first, "carol notes", checkpointer.Metadata{"user_id": "carol"})
				var dump bytes.Buffer
				if n, err := threadfile.Export(ctx, &dump, h.Saver, thread); err != nil || n != 2 {
					t.Fatalf("Export = %d, %v", n, err)
				}
				if r, err := h.Forget(ctx, "carol"); err != nil || r.Pending {
					t.Fatalf("Forget(carol): pending %v, %v", r.Pending, err)
				}
				st, err := threadfile.Import(ctx, bytes.NewReader(dump.Bytes()), h.Saver, threadfile.ImportOptions{})
				if !errors.Is(err, keys.ErrSubjectErased) {
					t.Errorf("import of carol's dump after Forget(carol) = %+v, %v; want keys.ErrSubjectErased", st, err)
				}
				n := 0
				for _, err := range h.Saver.List(ctx, &checkpointer.Config{ThreadID: thread}, checkpointer.ListOptions{AllNamespaces: true}) {
					if err != nil {
						t.Fatal(err)
					}
					n++
				}
				if n != 0 {
					t.Errorf("after the refused import, thread %q holds %d checkpoints; want none", thread, n)
				}
			})
		}
	}
}
