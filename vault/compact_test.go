package vault

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/config"
	"github.com/memvault/memvault/crypto"
	"github.com/memvault/memvault/internal/carve"
	"github.com/memvault/memvault/memvaulttest/sqlitetest"
	"github.com/memvault/memvault/reencrypt"
	"github.com/memvault/memvault/store"
)

func TestReaderProcess(t *testing.T) { sqlitetest.ReaderProcess(t) }

// underK1 writes n checkpoints and n memories in plaintext to a new SQLite
// database, re-encrypts them under K1 (values grow: cells move, pages are
// rebalanced), and returns the configuration and the values as K1 sealed
// them, for carve.Scan.
func underK1(t *testing.T, n int) (config.Config, []carve.Value) {
	t.Helper()
	ctx := t.Context()
	c := config.Default()
	c.DBPath = filepath.Join(t.TempDir(), "carve.db")
	c.Embeddings = "none"
	h, err := Open(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(0),
			ChannelValues:   map[string]any{"notes": strings.Repeat(fmt.Sprint("note ", i, " "), 1+(i*7919)%97)},
			ChannelVersions: map[string]string{"notes": h.Saver.NextVersion("")}}
		if _, err := h.Saver.Put(ctx, checkpointer.Config{ThreadID: fmt.Sprint("t", i%20)}, cp, nil, cp.ChannelVersions); err != nil {
			t.Fatal(err)
		}
		if err := h.Store.Put(ctx, store.Namespace{"users", fmt.Sprint("u", i%10)}, fmt.Sprint("k", i), map[string]any{"text": strings.Repeat("memory ", 1+(i*104729)%83)}); err != nil {
			t.Fatal(err)
		}
	}
	h.Close()
	c.Keys.Primary, c.DangerousAllowPlaintext = carve.K1, true
	h, err = Open(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	if sv, st, err := h.Reencrypt(ctx, reencrypt.Options{}); err != nil || sv.Rewritten != int64(n) || st.Rewritten != int64(n) {
		t.Fatalf("plaintext to K1: %+v %+v %v", sv, st, err)
	}
	h.Close()
	raw := openRaw(t, c.DBPath)
	values, err := carve.Stored(ctx, raw)
	raw.Close()
	if err != nil || len(values) != 2*n {
		t.Fatalf("%d values under K1: %v", len(values), err)
	}
	c.Keys, c.DangerousAllowPlaintext = config.Keys{Primary: carve.K2, Previous: []string{carve.K1}}, false
	return c, values
}

// k1Images searches the database file and its log for envelopes under
// K1, as whoever copies them and holds the retired K1 would.
func k1Images(t *testing.T, c config.Config, values []carve.Value) carve.Found {
	t.Helper()
	k1, err := crypto.ParseKey(carve.K1)
	if err != nil {
		t.Fatal(err)
	}
	f, err := carve.Scan([]string{c.DBPath, c.DBPath + "-wal"}, k1, values)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// TestReencryptLeavesNoOldKeyImageInTheFile: after plaintext → K1 → K2 on
// SQLite (`memvault keys reencrypt` twice), no envelope under K1 is left
// in the database file or its log — not in the unallocated gaps of pages,
// where SQLite leaves copies of moved cells that secure_delete does not
// zero (on the code before compaction, a carve found such images and some
// opened with K1), not in the log — whether the files are copied while the
// process still runs or after it ends.
func TestReencryptLeavesNoOldKeyImageInTheFile(t *testing.T) {
	ctx := t.Context()
	c, values := underK1(t, 600)
	h, err := Open(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if sv, st, err := h.Reencrypt(ctx, reencrypt.Options{}); err != nil || sv.Rewritten != 600 || st.Rewritten != 600 {
		t.Fatalf("K1 to K2: %+v %+v %v", sv, st, err)
	}
	if f := k1Images(t, c, values); f.Headers != 0 {
		t.Fatalf("while the process runs: %d images under K1 in the file or its log, %d of them open with K1", f.Headers, f.Opened)
	}
	h.Close()
	if f := k1Images(t, c, values); f.Headers != 0 {
		t.Fatalf("after the process ends: %d images under K1 in the file, %d of them open with K1", f.Headers, f.Opened)
	}
	h, err = Open(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		tu, err := h.Saver.GetTuple(ctx, checkpointer.Config{ThreadID: fmt.Sprint("t", i)})
		if err != nil || tu == nil {
			t.Fatalf("thread t%d after compaction: %v", i, err)
		}
		if it, err := h.Store.Get(ctx, store.Namespace{"users", fmt.Sprint("u", i)}, fmt.Sprint("k", i)); err != nil || it == nil {
			t.Fatalf("memory k%d after compaction: %v", i, err)
		}
	}
}

// TestReencryptReportsPendingCompaction: while another process holds a
// read transaction on the database, the log cannot be emptied; Reencrypt
// says so (reencrypt.ErrCompactPending) rather than report success with
// K1 images left in the log, and running it again once the reader is gone
// rewrites nothing and finishes the compaction.
func TestReencryptReportsPendingCompaction(t *testing.T) {
	ctx := t.Context()
	c, values := underK1(t, 100)
	h, err := Open(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	stop := sqlitetest.StartReader(t, c.DBPath)
	sv, st, err := h.Reencrypt(ctx, reencrypt.Options{})
	if !errors.Is(err, reencrypt.ErrCompactPending) || sv.Rewritten != 100 || st.Rewritten != 100 {
		t.Fatalf("K1 to K2 beside a reader: %+v %+v %v, want ErrCompactPending", sv, st, err)
	}
	if f := k1Images(t, c, values); f.Opened == 0 {
		t.Fatalf("beside the reader, the log was emptied (%+v): the error is not needed", f)
	}
	stop()
	sv, st, err = h.Reencrypt(ctx, reencrypt.Options{})
	if err != nil || sv.Rewritten != 0 || st.Rewritten != 0 {
		t.Fatalf("again, without the reader: %+v %+v %v", sv, st, err)
	}
	if f := k1Images(t, c, values); f.Headers != 0 {
		t.Fatalf("after the second run: %d images under K1, %d of them open with K1", f.Headers, f.Opened)
	}
}
