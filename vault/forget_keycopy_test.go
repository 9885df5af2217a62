package vault

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/config"
	"github.com/memvault/memvault/keys"
	"github.com/memvault/memvault/memvaulttest/pgtest"
)

// metadataCopyConfigs is guardConfigsOn with subjects named in checkpoint
// metadata ("user_id"): a live configuration, one on a copy of its key
// table, and the function that makes the copy.
func metadataCopyConfigs(t *testing.T, pg bool) (live, onCopy config.Config, makeCopy func()) {
	t.Helper()
	live, onCopy, makeCopy = guardConfigsOn(t, pg, false, false)
	for _, c := range []*config.Config{&live, &onCopy} {
		c.Subjects.ThreadSeparator, c.Subjects.ThreadMetadataKey = "", "user_id"
	}
	return live, onCopy, makeCopy
}

// TestForgetReachesThreadBoundInAKeyTableCopy (session 33, the carried
// note "key-table-copy binding invisible to forget", stated in the README
// as not fixed since session 29): with subjects named in checkpoint
// metadata, a process running on a copy of the key table (taken while no
// erasure had run since, so the pin accepts it) binds a thread to carol
// in its copy only. Forget(carol) on the live table read the live
// bindings and left that thread: its two checkpoints stayed, and the
// process on the copy read "carol notes" after Forget returned. Forget
// now also deletes every thread whose checkpoint metadata names carol
// (read from the metadata column, nothing decrypted).
func TestForgetReachesThreadBoundInAKeyTableCopy(t *testing.T) {
	ctx := context.Background()
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			live, onCopy, makeCopy := metadataCopyConfigs(t, backend == "postgres")
			h, err := Open(ctx, live)
			if err != nil {
				t.Fatal(err)
			}
			s29Put(ctx, t, h, "first", "", "carol's first visit", checkpointer.Metadata{"user_id": "carol"})
			s29Put(ctx, t, h, "bystander", "", "dave's notes", checkpointer.Metadata{"user_id": "dave"})
			h.Close()
			makeCopy()
			stale, err := Open(ctx, onCopy)
			if err != nil {
				t.Fatal(err)
			}
			defer stale.Close()
			first := s29Put(ctx, t, stale, "visit", "", "anonymous notes", nil)
			s29Put(ctx, t, stale, "visit", first, "carol notes", checkpointer.Metadata{"user_id": "carol"})
			if h, err = Open(ctx, live); err != nil {
				t.Fatal(err)
			}
			defer h.Close()
			r, err := h.Forget(ctx, "carol")
			if err != nil {
				t.Fatal(err)
			}
			if r.Threads != 2 {
				t.Errorf("Forget(carol) deleted %d threads, want 2 (first, and visit bound in the copy)", r.Threads)
			}
			var left []string
			for th, err := range h.Saver.(checkpointer.ThreadLister).ListThreads(ctx) {
				if err != nil {
					t.Fatal(err)
				}
				left = append(left, th.ThreadID)
			}
			if len(left) != 1 || left[0] != "bystander" {
				t.Errorf("threads left after Forget(carol): %q, want bystander only", left)
			}
			if tup, err := stale.Saver.GetTuple(ctx, checkpointer.Config{ThreadID: "visit"}); tup != nil || err != nil {
				t.Errorf("the process on the copy reads visit after Forget(carol): %v, %v", tup != nil, err)
			}
		})
	}
}

// BenchmarkMetadataThreadIDs is what Forget's read of the threads whose
// metadata names the subject costs, over 5 000 threads of one checkpoint
// each (a scan of the checkpoints' metadata column).
func BenchmarkMetadataThreadIDs(b *testing.B) {
	ctx := context.Background()
	for _, backend := range []string{"sqlite", "postgres"} {
		b.Run(backend, func(b *testing.B) {
			c := s23Config(b.TempDir())
			if backend == "postgres" {
				c.DSN = pgtest.SchemaDSN(b)
				c.KeyTable = fmt.Sprintf("keys_bench_%d", time.Now().UnixNano())
			}
			c.Subjects.ThreadSeparator, c.Subjects.ThreadMetadataKey = "", "user_id"
			h, err := Open(ctx, c)
			if err != nil {
				b.Fatal(err)
			}
			defer h.Close()
			for i := range 5000 {
				cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(0), ChannelValues: map[string]any{},
					ChannelVersions: map[string]string{}}
				md := checkpointer.Metadata{"user_id": fmt.Sprint("user-", i%500), "step": i}
				if _, err := h.Saver.Put(ctx, checkpointer.Config{ThreadID: fmt.Sprint("t-", i)}, cp, md, nil); err != nil {
					b.Fatal(err)
				}
			}
			b.ResetTimer()
			for b.Loop() {
				if ids, err := h.metadataThreadIDs(ctx, "user_id", "user-7"); err != nil || len(ids) != 10 {
					b.Fatal(ids, err)
				}
			}
		})
	}
}

// TestForgetMetadataScanExact (session 33 review of the metadata scan
// above): on PostgreSQL with MEMVAULT_SCHEMA set the scan read a bare
// "checkpoints" the pool's search_path does not name, so Forget destroyed
// the keys and then failed, every rerun alike; it matched the number 42
// as the subject "42" (SQLite and keys.BindThread take strings only); and
// it deleted a thread the key table binds to another subject whose
// metadata, written by another writer, names the one forgotten.
func TestForgetMetadataScanExact(t *testing.T) {
	ctx := context.Background()
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			c := subjectsConfigOn(t, backend == "postgres")
			c.Subjects.ThreadSeparator, c.Subjects.ThreadMetadataKey = "", "user_id"
			table := "checkpoints"
			if backend == "postgres" {
				c.Schema = fmt.Sprintf("app_%d", time.Now().UnixNano())
				table = c.Schema + ".checkpoints"
			}
			h, err := Open(ctx, c)
			if err != nil {
				t.Fatal(err)
			}
			defer h.Close()
			s29Put(ctx, t, h, "carol-visit", "", "carol's notes", checkpointer.Metadata{"user_id": "carol"})
			s29Put(ctx, t, h, "dave-visit", "", "dave's notes", checkpointer.Metadata{"user_id": "dave"})
			s29Put(ctx, t, h, "numbered", "", "nobody's notes", nil)
			// Another writer of the shared table: metadata naming carol
			// on dave's thread, and a number for a subject.
			dataSQL(t, c, `UPDATE `+table+` SET metadata = '{"user_id": "carol"}' WHERE thread_id = 'dave-visit'`)
			dataSQL(t, c, `UPDATE `+table+` SET metadata = '{"user_id": 42}' WHERE thread_id = 'numbered'`)
			if r, err := h.Forget(ctx, "42"); err != nil || r.Threads != 0 {
				t.Errorf("Forget(42), a number in metadata: %d threads deleted, %v; want 0", r.Threads, err)
			}
			r, err := h.Forget(ctx, "carol")
			if err != nil {
				t.Fatalf("Forget(carol): %v", err)
			}
			if r.Threads != 1 {
				t.Errorf("Forget(carol) deleted %d threads, want 1 (carol-visit)", r.Threads)
			}
			left := map[string]bool{}
			for th, err := range h.Saver.(checkpointer.ThreadLister).ListThreads(ctx) {
				if err != nil {
					t.Fatal(err)
				}
				left[th.ThreadID] = true
			}
			if len(left) != 2 || !left["dave-visit"] || !left["numbered"] {
				t.Errorf("threads left after Forget(carol): %v, want dave-visit and numbered", left)
			}
		})
	}
}

// TestForgetDestroysKeysOfThreadBoundInACopy (session 33 review): a
// thread that ran anonymously on the live key table — its values sealed
// under a key of its own there — then was bound to carol by a process on
// a copy of the key table. Forget(carol) deleted its rows but kept its own
// key (the live table bound it to no one), so a backup of the data from
// before the forget still opened its anonymous checkpoint. Forget now
// binds such a thread to carol in the live table before destroying her
// keys, and its own key goes with hers.
func TestForgetDestroysKeysOfThreadBoundInACopy(t *testing.T) {
	ctx := context.Background()
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			live, onCopy, makeCopy := metadataCopyConfigs(t, backend == "postgres")
			h, err := Open(ctx, live)
			if err != nil {
				t.Fatal(err)
			}
			first := s29Put(ctx, t, h, "visit", "", "anonymous notes", nil)
			h.Close()
			makeCopy()
			stale, err := Open(ctx, onCopy)
			if err != nil {
				t.Fatal(err)
			}
			defer stale.Close()
			s29Put(ctx, t, stale, "visit", first, "carol notes", checkpointer.Metadata{"user_id": "carol"})
			if h, err = Open(ctx, live); err != nil {
				t.Fatal(err)
			}
			defer h.Close()
			// The thread's own keys in the live table: KeyPage lists from
			// (owner, 0) on, in order.
			owner := keys.ThreadKeyOwner("visit")
			ownKeys := func() int {
				ks, err := h.Keys.KeyPage(ctx, owner, 0, 100)
				if err != nil {
					t.Fatal(err)
				}
				n := 0
				for _, k := range ks {
					if k.Subject == owner {
						n++
					}
				}
				return n
			}
			if n := ownKeys(); n == 0 {
				t.Fatal("the anonymous thread has no key of its own in the live table before the forget")
			}
			if _, err := h.Forget(ctx, "carol"); err != nil {
				t.Fatal(err)
			}
			if n := ownKeys(); n != 0 {
				t.Errorf("after Forget(carol) the live table keeps %d keys of the thread bound to her in a copy: a backup from before opens its anonymous checkpoint", n)
			}
		})
	}
}
