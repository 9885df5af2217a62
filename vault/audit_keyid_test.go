package vault

import (
	"context"
	"fmt"
	"testing"

	"github.com/memvault/memvault/audit"
	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/keys"
	"github.com/memvault/memvault/store"
)

// TestAuditKeyIDOfThreadWithKeysOfItsOwn (session 33, carried as
// "metadata-mode anon writes recorded with the master key id"): with
// subjects named in checkpoint metadata every thread's values are sealed
// under keys of its own (keys.ThreadKeyOwner), bound or not, but the
// audit trail recorded the writes and reads of a thread bound to no one
// with the master key's id — a record saying the master key, which no
// erasure destroys, sealed values that the user's erasure does erase —
// and those of a bound thread with the subject's key id or none. Each
// record now names the thread's own key (the first write's too, since
// session 39: TestAuditKeyIDOfFirstWrite).
func TestAuditKeyIDOfThreadWithKeysOfItsOwn(t *testing.T) {
	ctx := context.Background()
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			c := subjectsConfigOn(t, backend == "postgres")
			c.Subjects.ThreadSeparator = ""
			c.Subjects.ThreadMetadataKey = "user_id"
			c.Audit = true
			h, err := Open(ctx, c)
			if err != nil {
				t.Fatal(err)
			}
			defer h.Close()
			first := s29Put(ctx, t, h, "visit", "", "anonymous notes", nil)
			if _, err := h.Saver.GetTuple(ctx, checkpointer.Config{ThreadID: "visit"}); err != nil {
				t.Fatal(err)
			}
			s29Put(ctx, t, h, "visit", first, "carol notes", checkpointer.Metadata{"user_id": "carol"})
			if _, err := h.Saver.GetTuple(ctx, checkpointer.Config{ThreadID: "visit"}); err != nil {
				t.Fatal(err)
			}
			own := h.Keys.CurrentKeyID(keys.ThreadKeyOwner("visit"))
			master := h.Keys.CurrentKeyID("")
			if own == "" || own == master {
				t.Fatalf("the thread's own key id %q (master %q)", own, master)
			}
			if err := h.Audit.Flush(ctx); err != nil {
				t.Fatal(err)
			}
			name := func(id string) string {
				switch id {
				case own:
					return "own"
				case master:
					return "master"
				case "":
					return "blank"
				}
				return id
			}
			var got []string
			if err := h.Audit.Records(ctx, audit.Filter{}, func(r audit.Record) error {
				if r.Target == "visit" && (r.Op == audit.OpCheckpointWrite || r.Op == audit.OpCheckpointRead) {
					got = append(got, fmt.Sprintf("%s subject %q key %s", r.Op, r.Subject, name(r.KeyID)))
				}
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			// The first write's record is made before the thread has a
			// key: it was blank, as for any key not in the cache, until
			// session 39 (TestAuditKeyIDOfFirstWrite).
			want := []string{
				`checkpoint.write subject "" key own`, `checkpoint.read subject "" key own`,
				`checkpoint.write subject "carol" key own`, `checkpoint.read subject "carol" key own`,
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("records of visit:\n got %q\nwant %q", got, want)
			}
		})
	}
}

// TestAuditKeyIDOfFirstWrite (session 39, carried as "audit key id blank
// when subject key not cached"): the record of a subject's first write is
// made before the write seals anything, and the subject's first key was
// made by the write: the record named no key (keys.Hierarchy.CurrentKeyID
// reads no table), while every later write's named the subject's key. The
// first write of a fresh subject — a checkpoint of thread dave:1, an item
// of namespace users.erin — is now recorded with the key it is sealed
// under, as the next write is.
func TestAuditKeyIDOfFirstWrite(t *testing.T) {
	ctx := context.Background()
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			c := subjectsConfigOn(t, backend == "postgres")
			c.Audit = true
			h, err := Open(ctx, c)
			if err != nil {
				t.Fatal(err)
			}
			defer h.Close()
			for range 2 {
				s29Put(ctx, t, h, "dave:1", "", "dave notes", nil)
				if err := h.Store.Put(ctx, store.Namespace{"users", "erin"}, "diet", map[string]any{"v": "vegan"}); err != nil {
					t.Fatal(err)
				}
			}
			want := map[string]string{"dave": h.Keys.CurrentKeyID("dave"), "erin": h.Keys.CurrentKeyID("erin")}
			if want["dave"] == "" || want["erin"] == "" || want["dave"] == want["erin"] {
				t.Fatalf("subjects' key ids %q", want)
			}
			if err := h.Audit.Flush(ctx); err != nil {
				t.Fatal(err)
			}
			var got []string
			if err := h.Audit.Records(ctx, audit.Filter{}, func(r audit.Record) error {
				if r.Op == audit.OpCheckpointWrite || r.Op == audit.OpItemWrite {
					got = append(got, fmt.Sprintf("%s %s key ok=%v", r.Op, r.Subject, r.KeyID == want[r.Subject]))
				}
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			w := []string{"checkpoint.write dave key ok=true", "item.write erin key ok=true"}
			w = append(w, w...)
			if fmt.Sprint(got) != fmt.Sprint(w) {
				t.Errorf("write records:\n got %q\nwant %q", got, w)
			}
		})
	}
}
