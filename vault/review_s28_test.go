package vault

import (
	"context"
	"fmt"
	"testing"

	"github.com/memvault/memvault/audit"
	"github.com/memvault/memvault/checkpointer"
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
