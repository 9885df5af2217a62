package vault

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memvault/memvault/audit"
	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/config"
	"github.com/memvault/memvault/memvaulttest/testkeys"
	"github.com/memvault/memvault/store"
)

// TestReviewHugeReadSubjectBounded: session 18 bounded a record's target
// (audit.MaxTargetBytes: "a caller who picks ids cannot grow the
// append-only trail by megabytes per read"), but not its subject. With
// per-subject keys by thread separator (or namespace prefix) a read's
// subject is a part of the id the caller picks, so a GetTuple of thread
// "<8 MiB>:x" — or a Get under ("users", "<8 MiB>") — still appends
// megabytes to the trail per read, which nothing can ever delete.
func TestReviewHugeReadSubjectBounded(t *testing.T) {
	ctx := context.Background()
	c := config.Default()
	c.DBPath = filepath.Join(t.TempDir(), "agent.db")
	c.Keys.Primary = testkeys.Key
	c.Subjects.ThreadSeparator = ":"
	c.Subjects.NamespacePrefix = []string{"users"}
	c.Audit = true
	h, err := Open(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	huge := strings.Repeat("s", 8<<20)
	_, err = h.Saver.GetTuple(ctx, checkpointer.Config{ThreadID: huge + ":x"})
	t.Logf("GetTuple(thread of an 8 MiB subject): %.200v", err)
	_, err = h.Store.Get(ctx, store.Namespace{"users", huge}, "k")
	t.Logf("Get(namespace of an 8 MiB subject): %.200v", err)
	if err := h.Audit.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	total, n := 0, 0
	if err := h.Audit.Records(ctx, audit.Filter{}, func(r audit.Record) error {
		total += len(r.Target) + len(r.Subject) + len(r.KeyID)
		n++
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	const bound = 64 << 10
	if total > bound {
		t.Fatalf("two reads naming an 8 MiB subject added %d bytes to the append-only trail in %d records (want at most %d: the target is bounded by audit.MaxTargetBytes, the subject is not)", total, n, bound)
	}
}
