package vault

import (
	"context"
	"errors"
	"fmt"
	"os"
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
// (the mark in memvault_meta), a process opened on a new, empty trail —
// MEMVAULT_AUDIT_TABLE naming another file (a typo, a trail moved aside),
// or the database opened through a symlink, whose default trail beside the
// link is new (session 21 review) — reads nothing through it: the trail
// checks that its table holds the chain before its first pending record
// (found by review: reads, recorded as pending rows without reading the
// chain, returned the data until the chainer ran). A write through the
// same handle is refused too.
func TestReadThroughReplacedTrailRefused(t *testing.T) {
	for name, replace := range map[string]func(t *testing.T, c config.Config, dir string) config.Config{
		"MEMVAULT_AUDIT_TABLE names a new file": func(_ *testing.T, c config.Config, dir string) config.Config {
			c.AuditTable = filepath.Join(dir, "elsewhere.audit")
			return c
		},
		"the database through a symlink": func(t *testing.T, c config.Config, dir string) config.Config {
			link := filepath.Join(dir, "current.db")
			if err := os.Symlink(c.DBPath, link); err != nil {
				t.Fatal(err)
			}
			c.DBPath = link
			return c
		},
	} {
		t.Run(name, func(t *testing.T) { readThroughReplacedTrail(t, replace) })
	}
}

func readThroughReplacedTrail(t *testing.T, replace func(t *testing.T, c config.Config, dir string) config.Config) {
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

	h, err = Open(ctx, replace(t, c, dir))
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

// TestWriteThroughReplacedTrailRefused: as TestReadThroughReplacedTrailRefused,
// for writes on PostgreSQL, where a write's record is a pending row inserted
// by the write's own statement (audit.Options.WritesInTx): with
// MEMVAULT_AUDIT_TABLE naming a new, empty schema after the database's
// chain began, checkpoint and store writes are refused (found by review:
// they committed, their only records pending rows of the empty trail,
// until the chainer found the replacement).
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

// TestImportOfTwoThreadsRecordsBoth: an audited ImportThread of items of
// two threads records a write of each (found by review: only the first
// item's thread was recorded).
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

// TestHugePrincipalBounded: a record keeps at most audit.MaxTargetBytes of
// its principal, as of its target, subject and key id (found by review:
// two reads by an 8 MiB principal added 16 MiB to the append-only trail).
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

// TestSubjectsRequired: a database opened once with per-subject keys is
// marked, and a process without them (a cron job, a second service, a
// shell where MEMVAULT_SUBJECT_THREAD_SEPARATOR was not exported) is
// refused at Open with vault.ErrSubjectsRequired (found by review: it
// opened — the key check judges one stored value, under the master key —
// and stored a write of erased carol under the master key).
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
	if errors.Is(err, ErrSubjectsRequired) {
		return
	}
	if err != nil {
		t.Fatalf("Open without the subjects' configuration: %v; want ErrSubjectsRequired", err)
	}
	defer h2.Close()
	werr := put(h2, "carol:2", "carol, after her erasure")
	tp, _ := h2.Saver.GetTuple(ctx, checkpointer.Config{ThreadID: "carol:2"})
	if werr == nil && tp != nil {
		t.Fatalf("a process without the per-subject keys' configuration stored a write of erased carol (thread carol:2 reads %q, under the master key)",
			tp.Checkpoint.ChannelValues["notes"])
	}
}
