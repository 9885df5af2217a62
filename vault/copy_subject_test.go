package vault

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/keys"
)

// TestCopyAcrossSubjectsRefused: with subjects taken from thread ids
// (MEMVAULT_SUBJECT_THREAD_SEPARATOR), a copy of carol's thread to a
// thread of dave's, or to a thread of no subject, would seal carol's
// values under dave's keys or the master key, where Forget("carol") cannot
// reach them: her state would outlive her erasure (session 28 review: a
// copy "carol:1" → "dave:copy" still read "carol notes" after Forget).
// Such a copy is refused with keys.ErrSubjectMismatch and stores nothing;
// a copy within carol's threads, and a copy of a thread of no subject to
// anyone's, still run; after Forget("carol") none of her values is left.
func TestCopyAcrossSubjectsRefused(t *testing.T) {
	ctx := context.Background()
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			h, err := Open(ctx, subjectsConfigOn(t, backend == "postgres"))
			if err != nil {
				t.Fatal(err)
			}
			defer h.Close()
			put := func(thread, notes string) {
				t.Helper()
				cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(0), ChannelValues: map[string]any{"notes": notes},
					ChannelVersions: map[string]string{"notes": h.Saver.NextVersion("")}}
				if _, err := h.Saver.Put(ctx, checkpointer.Config{ThreadID: thread}, cp, nil, cp.ChannelVersions); err != nil {
					t.Fatal(err)
				}
			}
			read := func(thread string) any {
				t.Helper()
				tup, err := h.Saver.GetTuple(ctx, checkpointer.Config{ThreadID: thread})
				if err != nil {
					t.Fatalf("GetTuple(%s): %v", thread, err)
				}
				if tup == nil {
					return nil
				}
				return tup.Checkpoint.ChannelValues["notes"]
			}
			put("carol:1", "carol notes")
			put("shared", "shared notes")
			copier := h.Saver.(checkpointer.Copier)
			for _, dst := range []string{"dave:copy", "shared-copy"} {
				err := copier.CopyThread(ctx, "carol:1", dst)
				if !errors.Is(err, keys.ErrSubjectMismatch) {
					t.Fatalf("CopyThread(carol:1, %s) = %v, want keys.ErrSubjectMismatch", dst, err)
				}
				if v := read(dst); v != nil {
					t.Fatalf("refused copy stored %s: %v", dst, v)
				}
			}
			if err := copier.CopyThread(ctx, "carol:1", "carol:2"); err != nil {
				t.Fatalf("CopyThread within carol's threads: %v", err)
			}
			if err := copier.CopyThread(ctx, "shared", "dave:shared"); err != nil {
				t.Fatalf("CopyThread of a thread of no subject to dave's: %v", err)
			}
			if got := fmt.Sprint(read("carol:2"), "/", read("dave:shared")); got != "carol notes/shared notes" {
				t.Fatalf("copies read %s", got)
			}
			if _, err := h.Forget(ctx, "carol"); err != nil {
				t.Fatal(err)
			}
			for _, th := range []string{"carol:1", "carol:2", "dave:copy", "shared-copy"} {
				if v := read(th); v != nil {
					t.Fatalf("%s after Forget(carol): %v", th, v)
				}
			}
			if v := read("dave:shared"); v != "shared notes" {
				t.Fatalf("dave:shared after Forget(carol): %v", v)
			}
		})
	}
}
