package vault

import (
	"context"
	"fmt"
	"testing"

	"github.com/memvault/memvault/audit"
	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/checkpointer/durable"
)

// TestReviewS28ListingOfEveryThreadUnderAThreadNamedStar (session 28
// review): a listing of every thread is recorded as {checkpoint.list,
// "*"}, and `audit show --subject carol` keeps it only when it names no
// subject (audit.allThreads). Its subject is resolved as a thread's is,
// so with ThreadMetadataKey a thread named "*" — any text is a thread
// id — bound to mallory by its metadata makes every later listing of
// every thread mallory's: carol's report no longer holds the listings
// that returned her checkpoints.
func TestReviewS28ListingOfEveryThreadUnderAThreadNamedStar(t *testing.T) {
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
			put := func(thread, user, notes string) {
				t.Helper()
				cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(0), ChannelValues: map[string]any{"notes": notes},
					ChannelVersions: map[string]string{"notes": h.Saver.NextVersion("")}}
				if _, err := h.Saver.Put(ctx, checkpointer.Config{ThreadID: thread}, cp, checkpointer.Metadata{"user_id": user}, cp.ChannelVersions); err != nil {
					t.Fatal(err)
				}
			}
			put("visit", "carol", "carol notes")
			put("*", "mallory", "mallory's thread named *")
			listed := 0
			for tup, err := range h.Saver.List(ctx, nil, checkpointer.ListOptions{AllThreads: true}) {
				if err != nil {
					t.Fatal(err)
				}
				if tup.Config.ThreadID == "visit" {
					listed++
				}
			}
			if listed == 0 {
				t.Fatal("List of all threads did not return carol's thread")
			}
			if err := h.Audit.Flush(ctx); err != nil {
				t.Fatal(err)
			}
			var lists []string
			if err := h.Audit.Records(ctx, audit.Filter{Subject: "carol"}, func(r audit.Record) error {
				if r.Op == audit.OpCheckpointList {
					lists = append(lists, fmt.Sprintf("%s %q subject %q", r.Op, r.Target, r.Subject))
				}
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			// The record itself names no subject: it is no read of mallory's
			// thread "*" only.
			if err := h.Audit.Records(ctx, audit.Filter{}, func(r audit.Record) error {
				if r.Op == audit.OpCheckpointList && r.Subject != "" {
					t.Errorf("the listing of every thread is recorded under subject %q; want none", r.Subject)
				}
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			if len(lists) == 0 {
				var all []string
				_ = h.Audit.Records(ctx, audit.Filter{}, func(r audit.Record) error {
					if r.Op == audit.OpCheckpointList {
						all = append(all, fmt.Sprintf("%s %q subject %q", r.Op, r.Target, r.Subject))
					}
					return nil
				})
				t.Errorf("a List of every thread returned carol's checkpoint; no record of it is listed under subject carol (the listing's records: %v)", all)
			}
		})
	}
}

// TestReviewS28ForgetReservedRootPrefix (session 28 review): a namespace
// prefix whose root label is "langgraph" (LangGraph's reserved root, which
// no store accepts a write under: store.Namespace.Validate) passes
// keys.Subjects.Validate, so Open accepts it. deleteSubjectItems skips only
// the namespaces ValidatePrefix refuses, and DeletePrefix refuses
// ("langgraph", "users", "carol") — a namespace that can hold nothing —
// so every Forget of every subject fails after destroying its keys and
// deleting its threads, as a subject with '.' did (session 27).
func TestReviewS28ForgetReservedRootPrefix(t *testing.T) {
	ctx := context.Background()
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			c := subjectsConfigOn(t, backend == "postgres")
			c.Subjects.NamespacePrefix = []string{"langgraph", "users"}
			h, err := Open(ctx, c)
			if err != nil {
				t.Skipf("Open refuses the prefix: %v", err)
			}
			defer h.Close()
			if got, err := putCarolS22(ctx, h, "carol:1", "carol notes"); err != nil || got != "carol notes" {
				t.Fatalf("carol:1: %q, %v", got, err)
			}
			for run := range 2 {
				if r, err := h.Forget(ctx, "carol"); err != nil || r.Pending {
					t.Errorf("Forget(carol), run %d: pending %v, %v", run+1, r.Pending, err)
				}
			}
			if err := h.Readmit(ctx, "carol"); err != nil {
				t.Errorf("Readmit(carol) after its Forgets: %v", err)
			}
		})
	}
}

// TestReviewS28ForgetThreadWithOnlyWritesDurable (session 28 review):
// Forget finds a subject's threads through RowThreadIDs under the saver's
// wrappers (wrapped), which include threads holding only pending writes
// (TestForgetThreadWithOnlyWrites). With MEMVAULT_DURABILITY async or exit
// the saver is a durable.Saver, which neither lists row threads nor
// unwraps, so Forget falls back to ListThreads, which lists threads with
// checkpoints only: carol:2's pending write stays.
func TestReviewS28ForgetThreadWithOnlyWritesDurable(t *testing.T) {
	ctx := context.Background()
	for _, backend := range []string{"sqlite", "postgres"} {
		for _, mode := range []durable.Mode{durable.Async, durable.Exit} {
			t.Run(fmt.Sprintf("%s/%v", backend, mode), func(t *testing.T) {
				c := subjectsConfigOn(t, backend == "postgres")
				c.Durability = mode
				h, err := Open(ctx, c)
				if err != nil {
					t.Fatal(err)
				}
				defer h.Close()
				if _, err := putCarolS22(ctx, h, "carol:1", "carol notes"); err != nil {
					t.Fatal(err)
				}
				cfg := checkpointer.Config{ThreadID: "carol:2", CheckpointID: checkpointer.NewID(0)}
				if err := h.Saver.PutWrites(ctx, cfg, []checkpointer.Write{{Channel: "notes", Value: "carol's pending note"}}, "task-1", ""); err != nil {
					t.Fatalf("put_writes of a thread without checkpoints: %v", err)
				}
				// Stored before the Forget (a write still queued is refused
				// by it: DrainWrites after the keys are destroyed).
				if err := h.Saver.(*durable.Saver).Flush(ctx); err != nil {
					t.Fatal(err)
				}
				if _, err := h.Forget(ctx, "carol"); err != nil {
					t.Fatal(err)
				}
				var n int
				q := `SELECT count(*) FROM checkpoint_writes WHERE thread_id = 'carol:2'`
				if h.Pool != nil {
					err = h.Pool.QueryRow(ctx, q).Scan(&n)
				} else {
					db := openRaw(t, c.DBPath)
					defer db.Close()
					err = db.QueryRowContext(ctx, q).Scan(&n)
				}
				if err != nil {
					t.Fatal(err)
				}
				if n != 0 {
					t.Errorf("%d pending writes of carol:2 stay after Forget(carol) with durability %v", n, mode)
				}
			})
		}
	}
}
