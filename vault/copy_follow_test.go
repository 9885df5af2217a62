package vault

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/checkpointer/durable"
	"github.com/memvault/memvault/serde"
)

// TestCopyOfUnboundThreadErasedWithItsSource (session 28 review2, fixed in
// session 29): with subjects named in checkpoint metadata, a copy of a
// thread made while the thread had no subject yet (anonymous, before its
// user logged in) held the thread's pre-login values under the copy's own
// thread keys; when a later checkpoint bound the source to carol,
// Forget("carol") erased the source but the copy still read carol's notes.
// Now a copy follows its source in the key table, and an erasure reaches
// every thread that follows one of the subject's, copies of copies
// included, whichever process made the copy and in either order of copy
// and binding: their rows are deleted, their keys destroyed, so a backup
// of the data from before the erasure opens none of them either. A copy of
// another anonymous thread is left alone.
func TestCopyOfUnboundThreadErasedWithItsSource(t *testing.T) {
	ctx := context.Background()
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			c := subjectsConfigOn(t, backend == "postgres")
			c.Subjects.ThreadSeparator = ""
			c.Subjects.ThreadMetadataKey = "user_id"
			h1, err := Open(ctx, c) // the process that runs the graph
			if err != nil {
				t.Fatal(err)
			}
			defer func() { h1.Close() }()
			h2, err := Open(ctx, c) // another process, which copies
			if err != nil {
				t.Fatal(err)
			}
			defer func() { h2.Close() }()
			put := func(h *Handle, thread, notes string, md checkpointer.Metadata) {
				t.Helper()
				cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(0), ChannelValues: map[string]any{"notes": notes},
					ChannelVersions: map[string]string{"notes": h.Saver.NextVersion("")}}
				if _, err := h.Saver.Put(ctx, checkpointer.Config{ThreadID: thread}, cp, md, cp.ChannelVersions); err != nil {
					t.Fatal(err)
				}
			}
			read := func(h *Handle, thread string) (any, error) {
				t.Helper()
				tup, err := h.Saver.GetTuple(ctx, checkpointer.Config{ThreadID: thread})
				if err != nil || tup == nil {
					return nil, err
				}
				return tup.Checkpoint.ChannelValues["notes"], nil
			}
			copyThread := func(h *Handle, src, dst string) {
				t.Helper()
				if err := h.Saver.(checkpointer.Copier).CopyThread(ctx, src, dst); err != nil {
					t.Fatalf("CopyThread(%s, %s): %v", src, dst, err)
				}
			}
			put(h1, "anon", "pre-login: allergic to peanuts", checkpointer.Metadata{"source": "input"})
			put(h1, "bystander", "another visitor's notes", nil)
			// Copies before the login, by another process; a copy of a copy.
			copyThread(h2, "anon", "anon-copy")
			copyThread(h2, "anon-copy", "anon-copy2")
			copyThread(h2, "bystander", "bystander-copy")
			// The other order: h2 has just found anon unbound (and
			// caches that briefly), h1 binds it, h2 copies it.
			if v, err := read(h2, "anon"); err != nil || v != "pre-login: allergic to peanuts" {
				t.Fatalf("anon: %v, %v", v, err)
			}
			put(h1, "anon", "carol logged in", checkpointer.Metadata{"user_id": "carol"})
			copyThread(h2, "anon", "anon-late")
			for _, th := range []string{"anon-copy", "anon-copy2"} {
				if v, err := read(h1, th); err != nil || v != "pre-login: allergic to peanuts" {
					t.Fatalf("%s before forget: %v, %v", th, v, err)
				}
			}
			backup := takeBackup(t, h1, c) // after the copies, before the erasure
			r, err := h1.Forget(ctx, "carol")
			if err != nil {
				t.Fatal(err)
			}
			if r.Threads != 4 {
				t.Errorf("Forget(carol) deleted %d threads, want 4 (anon and its three copies)", r.Threads)
			}
			for _, th := range []string{"anon", "anon-copy", "anon-copy2", "anon-late"} {
				if v, err := read(h2, th); v != nil || err != nil {
					t.Errorf("%s after Forget(carol): %v, %v", th, v, err)
				}
			}
			for _, th := range []string{"bystander", "bystander-copy"} {
				if v, err := read(h2, th); err != nil || v != "another visitor's notes" {
					t.Errorf("%s after Forget(carol): %v, %v", th, v, err)
				}
			}
			// A stale writer of a copy gets no key again.
			cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(0), ChannelValues: map[string]any{"notes": "stale"},
				ChannelVersions: map[string]string{"notes": h2.Saver.NextVersion("")}}
			if _, err := h2.Saver.Put(ctx, checkpointer.Config{ThreadID: "anon-copy2"}, cp, nil, cp.ChannelVersions); err == nil {
				t.Errorf("a write of a forgotten copy after Forget(carol) was stored")
			}
			h2.Close()
			restoreBackup(t, h1, c, backup)
			if h1, err = Open(ctx, c); err != nil {
				t.Fatal(err)
			}
			for _, th := range []string{"anon", "anon-copy", "anon-copy2", "anon-late"} {
				if v, err := read(h1, th); !errors.Is(err, serde.ErrDecrypt) {
					t.Errorf("%s restored from before Forget(carol): %v, %v; want serde.ErrDecrypt", th, v, err)
				}
			}
			if v, err := read(h1, "bystander-copy"); err != nil || v != "another visitor's notes" {
				t.Errorf("bystander-copy restored: %v, %v", v, err)
			}
		})
	}
}

// TestQueuedLoginBindsBeforeForget (session 29, the note "metadata-mode
// forget live table only"): with durability exit or async, a checkpoint
// naming the user of a thread that ran anonymously is acknowledged once
// queued, but bound the thread to the user only when its queue was
// written. A Forget of the user in between found no thread bound to her:
// the queued login was refused (its pinned keys destroyed), and the
// thread's pre-login values — hers — stayed, under the thread's own keys.
// Now the thread is bound when the write is queued, as a synchronous put
// binds it before it seals: the Forget erases the thread.
func TestQueuedLoginBindsBeforeForget(t *testing.T) {
	ctx := context.Background()
	for _, backend := range []string{"sqlite", "postgres"} {
		for _, mode := range []durable.Mode{durable.Async, durable.Exit} {
			t.Run(fmt.Sprintf("%s/%v", backend, mode), func(t *testing.T) {
				c := subjectsConfigOn(t, backend == "postgres")
				c.Subjects.ThreadSeparator = ""
				c.Subjects.ThreadMetadataKey = "user_id"
				c.Durability = mode
				h, err := Open(ctx, c)
				if err != nil {
					t.Fatal(err)
				}
				defer func() { h.Close() }()
				ds := h.Saver.(*durable.Saver)
				put := func(notes string, md checkpointer.Metadata) {
					t.Helper()
					cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(0), ChannelValues: map[string]any{"notes": notes},
						ChannelVersions: map[string]string{"notes": h.Saver.NextVersion("")}}
					if _, err := h.Saver.Put(ctx, checkpointer.Config{ThreadID: "anon"}, cp, md, cp.ChannelVersions); err != nil {
						t.Fatal(err)
					}
				}
				put("pre-login: allergic to peanuts", nil)
				if err := ds.Flush(ctx); err != nil {
					t.Fatal(err)
				}
				// Acknowledged; with exit still queued, with async perhaps.
				put("carol logged in", checkpointer.Metadata{"user_id": "carol"})
				if _, err := h.Forget(ctx, "carol"); err != nil {
					t.Fatal(err)
				}
				_ = ds.Flush(ctx) // the queued login, if still queued, is refused
				h.Close()
				c.Durability = durable.Sync
				if h, err = Open(ctx, c); err != nil {
					t.Fatal(err)
				}
				if tup, err := h.Saver.GetTuple(ctx, checkpointer.Config{ThreadID: "anon"}); tup != nil || err != nil {
					v := any(nil)
					if tup != nil {
						v = tup.Checkpoint.ChannelValues["notes"]
					}
					t.Errorf("anon after Forget(carol): %v, %v", v, err)
				}
			})
		}
	}
}
