package audit_test

import (
	"context"
	"errors"
	"testing"

	"github.com/memvault/memvault/audit"
	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/checkpointer/memsaver"
)

// TestRefusedEmptyThreadRecordsNothing (session 28's note): a call the
// saver refuses for its empty thread id read and wrote nothing, and is not
// recorded, as a thread id holding a NUL byte is not
// (TestAuditedBadIDsGetTheirSentinel). An audited List with a config of no
// thread (and no AllThreads) recorded `checkpoint.read ""` before the
// inner saver refused it; GetTuple and DeleteThread did the same. A
// listing of every thread is still recorded.
func TestRefusedEmptyThreadRecordsNothing(t *testing.T) {
	ctx := context.Background()
	tr := auditedTrail(t)
	inner, err := memsaver.New(memsaver.Options{})
	must(t, err)
	sv := audit.NewSaver(inner, tr, nil)
	count := func() (n int, ops []string) {
		t.Helper()
		must(t, tr.Records(ctx, audit.Filter{}, func(r audit.Record) error {
			n++
			ops = append(ops, r.Op+" "+r.Target)
			return nil
		}))
		return n, ops
	}
	for _, err := range sv.List(ctx, &checkpointer.Config{}, checkpointer.ListOptions{}) {
		if !errors.Is(err, checkpointer.ErrMissingThreadID) {
			t.Fatalf("audited List of no thread: %v, want checkpointer.ErrMissingThreadID", err)
		}
	}
	if _, err := sv.GetTuple(ctx, checkpointer.Config{}); !errors.Is(err, checkpointer.ErrMissingThreadID) {
		t.Fatalf("audited GetTuple of no thread: %v, want checkpointer.ErrMissingThreadID", err)
	}
	if err := sv.DeleteThread(ctx, ""); !errors.Is(err, checkpointer.ErrMissingThreadID) {
		t.Fatalf("audited DeleteThread of no thread: %v, want checkpointer.ErrMissingThreadID", err)
	}
	if n, ops := count(); n != 0 {
		t.Fatalf("refused calls left %d records: %q", n, ops)
	}
	for _, err := range sv.List(ctx, &checkpointer.Config{}, checkpointer.ListOptions{AllThreads: true}) {
		must(t, err)
	}
	if n, ops := count(); n != 1 || ops[0] != audit.OpCheckpointList+" *" {
		t.Fatalf("a listing of every thread: %q, want one %s record", ops, audit.OpCheckpointList)
	}
}
