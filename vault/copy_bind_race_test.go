package vault

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/memvault/memvault/checkpointer"
)

// TestCopyRacingLoginErasedWithTheUser (session 33, the carried note
// "copy vs bind race"; an attack that held): with subjects named in
// checkpoint metadata, one process copies an anonymous thread while
// another binds it to carol (her login's checkpoint) at the same time,
// 16 threads at once. Whichever lands first, Forget(carol) deletes every
// source and every copy: the copy is recorded as following its source
// before it writes, so the binding's order does not matter. On
// PostgreSQL it hung before the key table had a pool of its own
// (TestConcurrentCopiesOnPostgreSQL).
func TestCopyRacingLoginErasedWithTheUser(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute) // a hang fails, see TestConcurrentCopiesOnPostgreSQL
	defer cancel()
	const n = 16
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			c := subjectsConfigOn(t, backend == "postgres")
			c.Subjects.ThreadSeparator = ""
			c.Subjects.ThreadMetadataKey = "user_id"
			h1, err := Open(ctx, c) // the process that runs the graph
			if err != nil {
				t.Fatal(err)
			}
			defer h1.Close()
			h2, err := Open(ctx, c) // another process, which copies
			if err != nil {
				t.Fatal(err)
			}
			defer h2.Close()
			put := func(h *Handle, thread, notes string, md checkpointer.Metadata) error {
				cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(0), ChannelValues: map[string]any{"notes": notes},
					ChannelVersions: map[string]string{"notes": h.Saver.NextVersion("")}}
				_, err := h.Saver.Put(ctx, checkpointer.Config{ThreadID: thread}, cp, md, cp.ChannelVersions)
				return err
			}
			for i := range n {
				if err := put(h1, fmt.Sprintf("anon-%d", i), "pre-login: allergic to peanuts", nil); err != nil {
					t.Fatal(err)
				}
				// h2 reads it first, so that it caches the thread as unbound.
				if _, err := h2.Saver.GetTuple(ctx, checkpointer.Config{ThreadID: fmt.Sprintf("anon-%d", i)}); err != nil {
					t.Fatal(err)
				}
			}
			var wg sync.WaitGroup
			errs := make(chan error, 2*n)
			for i := range n {
				src := fmt.Sprintf("anon-%d", i)
				wg.Add(2)
				go func() {
					defer wg.Done()
					errs <- put(h1, src, "carol logged in", checkpointer.Metadata{"user_id": "carol"})
				}()
				go func() {
					defer wg.Done()
					errs <- h2.Saver.(checkpointer.Copier).CopyThread(ctx, src, src+"-copy")
				}()
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				if err != nil {
					t.Fatal(err)
				}
			}
			r, err := h1.Forget(ctx, "carol")
			if err != nil {
				t.Fatal(err)
			}
			if r.Threads != 2*n {
				t.Errorf("Forget(carol) deleted %d threads, want %d (every source and copy)", r.Threads, 2*n)
			}
			for i := range n {
				for _, th := range []string{fmt.Sprintf("anon-%d", i), fmt.Sprintf("anon-%d-copy", i)} {
					for _, h := range []*Handle{h1, h2} {
						if tup, err := h.Saver.GetTuple(ctx, checkpointer.Config{ThreadID: th}); tup != nil || err != nil {
							t.Errorf("%s after Forget(carol): %v, %v", th, tup != nil, err)
						}
					}
				}
			}
		})
	}
}

// TestConcurrentCopiesOnPostgreSQL (session 33, found by
// TestCopyRacingLoginErasedWithTheUser): with subjects named in
// checkpoint metadata, a copy of a thread seals its values under the
// destination's own keys inside the data transaction, and making or
// reading those keys needs a connection to the key table; the key table
// shared the data's pool, so as many copies at once as the pool has
// connections (4 on this 2-core machine) each held one and waited for
// ever for another: 8 copies hung until the test's timeout. The key
// table now has a pool of its own. (The 2-minute deadline turns a hang
// into a failure; the copies take about a second.)
func TestConcurrentCopiesOnPostgreSQL(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c := subjectsConfigOn(t, true)
	c.Subjects.ThreadSeparator = ""
	c.Subjects.ThreadMetadataKey = "user_id"
	h, err := Open(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	const n = 8
	for i := range n {
		cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(0), ChannelValues: map[string]any{"notes": "visit notes"},
			ChannelVersions: map[string]string{"notes": h.Saver.NextVersion("")}}
		if _, err := h.Saver.Put(ctx, checkpointer.Config{ThreadID: fmt.Sprint("visit-", i)}, cp, nil, cp.ChannelVersions); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			if err := h.Saver.(checkpointer.Copier).CopyThread(ctx, fmt.Sprint("visit-", i), fmt.Sprint("visit-", i, "-copy")); err != nil {
				t.Errorf("CopyThread(visit-%d), %d at once: %v", i, n, err)
			}
		})
	}
	wg.Wait()
	for i := range n {
		tup, err := h.Saver.GetTuple(ctx, checkpointer.Config{ThreadID: fmt.Sprint("visit-", i, "-copy")})
		if err != nil || tup == nil || tup.Checkpoint.ChannelValues["notes"] != "visit notes" {
			t.Errorf("visit-%d-copy: %v, %v", i, tup, err)
		}
	}
}
