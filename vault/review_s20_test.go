package vault

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memvault/memvault/audit"
	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/config"
	"github.com/memvault/memvault/keys"
	"github.com/memvault/memvault/memvaulttest/pgtest"
	"github.com/memvault/memvault/memvaulttest/testkeys"
	"github.com/memvault/memvault/store"
)

// TestReadThroughReplacedTrailRefused: once a database's audit trail began
// (the mark in memvault_meta), "a trail without a linked record, or an
// empty one, fails Verify and no writer extends it" and vault.Open
// "refuses a configuration that does not record". A process opened with
// MEMVAULT_AUDIT_TABLE pointing at a new, empty trail — a typo, or a
// trail moved aside — is not refused at Open, and its reads are recorded
// as pending rows in that empty trail (no chain head is read, so nothing
// notices the replacement) and return the data: the real trail never
// records them. Only the chainer, ~20 ms later, finds the trail replaced
// and later operations fail. A write through the same handle (recorded by
// an append, which checks the chain) is refused: the control.
func TestReadThroughReplacedTrailRefused(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	c := config.Default()
	c.DBPath = filepath.Join(dir, "agent.db")
	c.Keys.Primary = testkeys.Key
	c.Audit = true
	h, err := Open(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(0), ChannelValues: map[string]any{"notes": "carol takes insulin"},
		ChannelVersions: map[string]string{"notes": h.Saver.NextVersion("")}}
	if _, err := h.Saver.Put(ctx, checkpointer.Config{ThreadID: "chat"}, cp, nil, cp.ChannelVersions); err != nil {
		t.Fatal(err)
	}
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}

	c.AuditTable = filepath.Join(dir, "elsewhere.audit")
	h, err = Open(ctx, c)
	if err != nil {
		t.Logf("Open with the trail replaced by an empty one: %v (refused: holds)", err)
		return
	}
	defer h.Close()
	tp, rerr := h.Saver.GetTuple(ctx, checkpointer.Config{ThreadID: "chat"})
	cp2 := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(1), ChannelValues: map[string]any{"notes": "x"},
		ChannelVersions: map[string]string{"notes": h.Saver.NextVersion("")}}
	_, werr := h.Saver.Put(ctx, checkpointer.Config{ThreadID: "other"}, cp2, nil, cp2.ChannelVersions)
	if werr == nil {
		t.Errorf("a write through the empty trail succeeded")
	}
	if rerr == nil && tp != nil {
		t.Fatalf("a read through an empty trail that replaced the database's (its chain began) returned %q; the write after it: %v",
			tp.Checkpoint.ChannelValues["notes"], werr)
	}
}

// TestWriteThroughReplacedTrailRefused: as TestReviewReadThroughReplacedTrail,
// for writes on PostgreSQL, where a write's record is a pending row inserted
// by the write's own statement (audit.Options.WritesInTx). With
// MEMVAULT_AUDIT_TABLE naming a new, empty schema after the database's
// chain began (a typo, or the trail moved aside), Open succeeds and the
// first writes commit — values stored, their only records pending rows of
// the empty trail, which never verifies — until the chainer finds the
// replacement. A trail in its own SQLite file refuses the same write (the
// record is appended, after checking the chain): the control.
func TestWriteThroughReplacedTrailRefused(t *testing.T) {
	ctx := context.Background()
	c := config.Default()
	c.DSN = pgtest.SchemaDSN(t)
	c.Keys.Primary = testkeys.Key
	c.Audit = true
	c.Embeddings = "none"
	c.AuditTable = fmt.Sprintf("audit_%d", time.Now().UnixNano())
	h, err := Open(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	put := func(h *Handle, thread string) error {
		cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(0), ChannelValues: map[string]any{"notes": "carol takes insulin"},
			ChannelVersions: map[string]string{"notes": h.Saver.NextVersion("")}}
		_, err := h.Saver.Put(ctx, checkpointer.Config{ThreadID: thread}, cp, nil, cp.ChannelVersions)
		return err
	}
	if err := put(h, "chat"); err != nil {
		t.Fatal(err)
	}
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}

	c.AuditTable += "_typo"
	h, err = Open(ctx, c)
	if err != nil {
		t.Logf("Open with the trail replaced by an empty one: %v (refused: holds)", err)
		return
	}
	werr := put(h, "unrecorded")
	serr := h.Store.Put(ctx, store.Namespace{"users", "carol"}, "diet", map[string]any{"v": "no peanuts"})
	cerr := h.Close()
	if werr == nil || serr == nil {
		t.Fatalf("writes through an empty trail that replaced the database's (its chain began) committed: checkpoint put %v, store put %v; Close: %v", werr, serr, cerr)
	}
}

// TestImportOfTwoThreadsRecordsBoth: the audit trail records every
// write. checkpointer.ThreadImporter.ImportThread takes items of any
// threads (the savers store them all, in one transaction; the durable
// saver waits for each thread's queue), but the audited saver records one
// checkpoint.write, for items[0]'s thread: the other threads' checkpoints
// are stored with no record of their write.
func TestImportOfTwoThreadsRecordsBoth(t *testing.T) {
	ctx := context.Background()
	c := config.Default()
	c.DBPath = filepath.Join(t.TempDir(), "agent.db")
	c.Keys.Primary = testkeys.Key
	c.Audit = true
	h, err := Open(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	im, ok := h.Saver.(checkpointer.ThreadImporter)
	if !ok {
		t.Fatal("the audited saver imports nothing")
	}
	var items []checkpointer.ImportCheckpoint
	for i, th := range []string{"carol-chat", "bob-chat"} {
		cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(i), ChannelValues: map[string]any{"notes": th + " secrets"},
			ChannelVersions: map[string]string{"notes": h.Saver.NextVersion("")}}
		items = append(items, checkpointer.ImportCheckpoint{ThreadID: th, ID: cp.ID, Checkpoint: cp, NewVersions: cp.ChannelVersions})
	}
	if err := im.ImportThread(ctx, items); err != nil {
		t.Logf("an import of two threads: %v (refused: holds)", err)
		return
	}
	written := map[string]bool{}
	if err := h.Audit.Records(ctx, audit.Filter{}, func(r audit.Record) error {
		if r.Op == audit.OpCheckpointWrite {
			written[r.Target] = true
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	for _, it := range items {
		tp, err := h.Saver.GetTuple(ctx, checkpointer.Config{ThreadID: it.ThreadID})
		if err == nil && tp != nil && !written[it.ThreadID] {
			t.Errorf("thread %s was written by the import (reads %q) and the trail holds no checkpoint.write of it (writes recorded: %v)",
				it.ThreadID, tp.Checkpoint.ChannelValues["notes"], written)
		}
	}
}

// TestHugePrincipalBounded: a record keeps at most
// audit.MaxTargetBytes of its target, subject and key id, "so that reads
// cannot grow the append-only trail by what a caller sends" (session 19
// bounded the subject and key id after a review). The principal is the
// fourth text of a record and is not bounded: an application that records
// its users by the name they sign in with (audit.WithPrincipal) lets one
// user with an 8 MiB name add 8 MiB to the trail per read, which nothing
// can ever delete.
func TestHugePrincipalBounded(t *testing.T) {
	c := config.Default()
	c.DBPath = filepath.Join(t.TempDir(), "agent.db")
	c.Keys.Primary = testkeys.Key
	c.Audit = true
	h, err := Open(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	ctx := audit.WithPrincipal(context.Background(), strings.Repeat("p", 8<<20))
	for range 2 {
		_, err = h.Saver.GetTuple(ctx, checkpointer.Config{ThreadID: "chat"})
		t.Logf("GetTuple by an 8 MiB principal: %.200v", err)
	}
	if err := h.Audit.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	total, n := 0, 0
	if err := h.Audit.Records(ctx, audit.Filter{}, func(r audit.Record) error {
		total += len(r.Principal) + len(r.Target) + len(r.Subject) + len(r.KeyID)
		n++
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	const bound = 64 << 10
	if total > bound {
		t.Fatalf("two reads by an 8 MiB principal added %d bytes to the append-only trail in %d records (want at most %d, as for targets, subjects and key ids)", total, n, bound)
	}
}

// TestSubjectsRequired: erasure step 2 of
// the README: "Every write of S's values, by any process, fails with
// keys.ErrSubjectErased … S stays erased: no key is made for S again, so
// a stale process cannot bring S back, until readmit". A process of the
// same deployment started without MEMVAULT_SUBJECT_THREAD_SEPARATOR (a
// cron job, a second service, a shell where the variable was not
// exported) opens the database — the key check judges only the first
// stored value, under the master key — and writes carol's thread under
// the master key after her erasure: stored, readable, and out of reach of
// any later erasure's key destruction (a backup keeps it readable).
// A database that records its audit trail refuses a process that does not
// record (vault.ErrAuditRequired); per-subject keys have no such guard.
func TestSubjectsRequired(t *testing.T) {
	ctx := context.Background()
	c := config.Default()
	c.DBPath = filepath.Join(t.TempDir(), "agent.db")
	c.Keys.Primary = testkeys.Key
	c.Subjects.ThreadSeparator = ":"
	h, err := Open(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	put := func(h *Handle, thread, text string) error {
		cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(0), ChannelValues: map[string]any{"notes": text},
			ChannelVersions: map[string]string{"notes": h.Saver.NextVersion("")}}
		_, err := h.Saver.Put(ctx, checkpointer.Config{ThreadID: thread}, cp, nil, cp.ChannelVersions)
		return err
	}
	if err := put(h, "agent-notes", "shared notes"); err != nil { // the first stored value: master key
		t.Fatal(err)
	}
	if err := put(h, "carol:1", "carol takes insulin"); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Forget(ctx, "carol"); err != nil {
		t.Fatal(err)
	}
	if err := put(h, "carol:2", "carol, after her erasure"); !errors.Is(err, keys.ErrSubjectErased) {
		t.Fatalf("control: a write of the erased subject = %v, want keys.ErrSubjectErased", err)
	}
	_ = h.Close()

	stale := c
	stale.Subjects = keys.Subjects{} // MEMVAULT_SUBJECT_THREAD_SEPARATOR not exported
	h2, err := Open(ctx, stale)
	if err != nil {
		t.Logf("Open without the subjects' configuration: %v (refused: holds)", err)
		return
	}
	defer h2.Close()
	werr := put(h2, "carol:2", "carol, after her erasure")
	tp, _ := h2.Saver.GetTuple(ctx, checkpointer.Config{ThreadID: "carol:2"})
	if werr == nil && tp != nil {
		t.Fatalf("a process without the per-subject keys' configuration stored a write of erased carol (thread carol:2 reads %q, under the master key)",
			tp.Checkpoint.ChannelValues["notes"])
	}
}
