package vault

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/keys"
)

// TestReviewS30SweepWithSubjectsAndAudit (session 30 review, attack that
// held): retention with per-subject keys named in checkpoint metadata and
// the audit trail on, on SQLite and PostgreSQL. A thread whose checkpoint
// naming its user is swept away (KeepLatest 1) keeps its binding: the
// kept checkpoint reads whole — the value of a channel it did not change,
// written by a swept checkpoint under the thread's keys, included —, a
// thread that ran anonymous before its login likewise, the trail checks
// clean after the sweep and after the user's erasure, which still reaches
// the swept thread, and the other user's thread is untouched.
func TestReviewS30SweepWithSubjectsAndAudit(t *testing.T) {
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			ctx := context.Background()
			c := subjectsConfigOn(t, backend == "postgres")
			c.Subjects.ThreadSeparator = ""
			c.Subjects.ThreadMetadataKey = "user_id"
			c.Audit = true
			h, err := Open(ctx, c)
			if err != nil {
				t.Fatal(err)
			}
			defer h.Close()
			put := func(thread, parent string, md checkpointer.Metadata, prev map[string]string, values map[string]any) (string, map[string]string) {
				t.Helper()
				versions := map[string]string{}
				for k, v := range prev {
					versions[k] = v
				}
				newVersions := map[string]string{}
				for ch := range values {
					versions[ch] = h.Saver.NextVersion(prev[ch])
					newVersions[ch] = versions[ch]
				}
				cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(0), ChannelValues: values, ChannelVersions: versions}
				if _, err := h.Saver.Put(ctx, checkpointer.Config{ThreadID: thread, CheckpointID: parent}, cp, md, newVersions); err != nil {
					t.Fatalf("Put(%s): %v", thread, err)
				}
				return cp.ID, versions
			}
			// carol's thread: the first checkpoint names her and writes
			// both channels; the later ones change only "a".
			id, v := put("t-carol", "", checkpointer.Metadata{"user_id": "carol"}, nil, map[string]any{"a": "a1", "b": "carol's b"})
			id, v = put("t-carol", id, checkpointer.Metadata{"step": 1}, v, map[string]any{"a": "a2"})
			last, _ := put("t-carol", id, checkpointer.Metadata{"step": 2}, v, map[string]any{"a": "a3"})
			if err := h.Saver.PutWrites(ctx, checkpointer.Config{ThreadID: "t-carol", CheckpointID: last}, []checkpointer.Write{{Channel: "a", Value: "pending a"}}, "task-1", ""); err != nil {
				t.Fatal(err)
			}
			// dave's: anonymous first, then the login.
			id, v = put("t-dave", "", nil, nil, map[string]any{"a": "anon a", "b": "anon b"})
			put("t-dave", id, checkpointer.Metadata{"user_id": "dave"}, v, map[string]any{"a": "dave a"})

			rep, err := h.Saver.(checkpointer.Sweeper).Sweep(ctx, checkpointer.RetentionPolicy{KeepLatest: 1}, checkpointer.SweepOptions{})
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("sweep: %+v", rep)
			read := func(thread string) map[string]any {
				t.Helper()
				tp, err := h.Saver.GetTuple(ctx, checkpointer.Config{ThreadID: thread})
				if err != nil || tp == nil {
					t.Fatalf("%s after the sweep: %v, %v", thread, tp, err)
				}
				out := map[string]any{}
				for k, v := range tp.Checkpoint.ChannelValues {
					out[k] = v
				}
				for _, w := range tp.PendingWrites {
					out["write:"+w.Channel] = w.Value
				}
				return out
			}
			if got := read("t-carol"); got["a"] != "a3" || got["b"] != "carol's b" || got["write:a"] != "pending a" {
				t.Errorf("carol's kept checkpoint after the sweep: %v", got)
			}
			if got := read("t-dave"); got["a"] != "dave a" || got["b"] != "anon b" {
				t.Errorf("dave's kept checkpoint after the sweep: %v", got)
			}
			check := func(when string) {
				t.Helper()
				if err := h.Audit.Flush(ctx); err != nil {
					t.Fatal(err)
				}
				if r, err := h.Audit.Check(ctx, nil); err != nil {
					t.Errorf("trail %s: %v (%+v)", when, err, r)
				}
			}
			check("after the sweep")
			// The checkpoint that named carol is gone; the binding is not:
			// a checkpoint naming another user is refused, from this
			// process and from a new one, which reads carol's thread whole.
			if _, err := h.Saver.Put(ctx, checkpointer.Config{ThreadID: "t-carol", CheckpointID: last},
				&checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(0), ChannelValues: map[string]any{}, ChannelVersions: map[string]string{}},
				checkpointer.Metadata{"user_id": "mallory"}, map[string]string{}); !errors.Is(err, keys.ErrSubjectMismatch) {
				t.Errorf("a checkpoint naming mallory on carol's swept thread: %v, want keys.ErrSubjectMismatch", err)
			}
			h2, err := Open(ctx, c)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := h2.Saver.Put(ctx, checkpointer.Config{ThreadID: "t-carol", CheckpointID: last},
				&checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(0), ChannelValues: map[string]any{}, ChannelVersions: map[string]string{}},
				checkpointer.Metadata{"user_id": "mallory"}, map[string]string{}); !errors.Is(err, keys.ErrSubjectMismatch) {
				t.Errorf("a new process: a checkpoint naming mallory on carol's swept thread: %v, want keys.ErrSubjectMismatch", err)
			}
			if tp, err := h2.Saver.GetTuple(ctx, checkpointer.Config{ThreadID: "t-carol"}); err != nil || tp == nil || tp.Checkpoint.ChannelValues["b"] != "carol's b" {
				t.Errorf("a new process reads carol's swept thread: %v, %v", tp, err)
			}
			if err := h2.Close(); err != nil {
				t.Fatal(err)
			}
			if _, err := h.Forget(ctx, "carol"); err != nil {
				t.Fatal(err)
			}
			if tp, err := h.Saver.GetTuple(ctx, checkpointer.Config{ThreadID: "t-carol"}); err != nil || tp != nil {
				t.Errorf("carol's swept thread after her erasure: %v, %v", tp, err)
			}
			if got := read("t-dave"); got["a"] != "dave a" || got["b"] != "anon b" {
				t.Errorf("dave's thread after carol's erasure: %v", got)
			}
			// A new sweep after the erasure still checks clean.
			if _, err := h.Saver.(checkpointer.Sweeper).Sweep(ctx, checkpointer.RetentionPolicy{KeepLatest: 1}, checkpointer.SweepOptions{}); err != nil {
				t.Fatal(err)
			}
			check("after the erasure and a second sweep")
		})
	}
}

// TestReviewS30ForgetSubjectHoldingSeparator (session 30 review): with
// subjects from thread ids ("the part of a thread id before its first
// separator"), a user id that itself holds the separator — "tenant:42",
// a common form — never names a subject: thread "tenant:42:refund" is
// subject "tenant"'s, sealed under tenant's keys. `memvault forget
// tenant:42` printed a receipt of success (no key, no thread) and left
// every row of that user in place, readable; the operator had no sign
// that nothing was erased. Forget now refuses such a subject when it
// cannot own anything (no namespace prefixes), naming the subject the
// threads belong to, and records nothing.
func TestReviewS30ForgetSubjectHoldingSeparator(t *testing.T) {
	ctx := context.Background()
	c := s23Config(t.TempDir())
	c.Subjects.NamespacePrefix = nil
	h, err := Open(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	s29Put(ctx, t, h, "tenant:42:refund", "", "tenant 42's card number", nil)
	rec, err := h.Forget(ctx, "tenant:42")
	if !errors.Is(err, ErrSubjectHoldsSeparator) {
		t.Errorf("forget tenant:42: receipt %+v, %v; want ErrSubjectHoldsSeparator", rec, err)
	} else if !strings.Contains(err.Error(), `"tenant"`) {
		t.Errorf("the refusal does not name the subject the threads are: %v", err)
	}
	if e, err := h.Keys.Erasure(ctx, "tenant:42"); err != nil || e != nil {
		t.Errorf("an erasure of tenant:42 was recorded: %+v, %v", e, err)
	}
	if tp, err := h.Saver.GetTuple(ctx, checkpointer.Config{ThreadID: "tenant:42:refund"}); err != nil || tp == nil {
		t.Fatalf("the thread after the refused forget: %v, %v", tp, err)
	}
	// The subject the thread is, is forgotten as ever.
	if rec, err := h.Forget(ctx, "tenant"); err != nil || rec.Threads != 1 {
		t.Errorf("forget tenant: %+v, %v", rec, err)
	}
}
