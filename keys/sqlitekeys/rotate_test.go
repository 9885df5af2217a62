package sqlitekeys_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/memvault/memvault/crypto"
	"github.com/memvault/memvault/internal/carve"
	"github.com/memvault/memvault/internal/sqlitedb"
	"github.com/memvault/memvault/keys"
	"github.com/memvault/memvault/keys/sqlitekeys"
	"github.com/memvault/memvault/memvaulttest/sqlitetest"
	"github.com/memvault/memvault/serde"
)

func TestReaderProcess(t *testing.T) { sqlitetest.ReaderProcess(t) }

// rotatedTable makes a key table of n subjects whose data keys the master
// key K1's KEK wrapped, and a hierarchy whose KEK is K2's (K1's after it,
// to unwrap), ready for RotateKEK. It returns the wrapped keys as K1's KEK
// wrapped them: random 60-byte blobs, each of which K1 unwraps.
func rotatedTable(t *testing.T, path string, n int) (*sqlitekeys.Table, *keys.Hierarchy, [][]byte) {
	t.Helper()
	ctx := t.Context()
	k1, err := crypto.ParseKey(carve.K1)
	if err != nil {
		t.Fatal(err)
	}
	k2, err := crypto.ParseKey(carve.K2)
	if err != nil {
		t.Fatal(err)
	}
	r1, _ := crypto.NewKeyring(k1)
	r2, _ := crypto.NewKeyring(k2, k1)
	m1, _ := serde.NewEncrypted(nil, r1)
	m2, _ := serde.NewEncrypted(nil, r2)
	tb, err := sqlitekeys.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	h1, err := keys.New(keys.Options{Master: m1, Table: tb, Subjects: keys.Subjects{ThreadSeparator: ":"}})
	if err != nil {
		t.Fatal(err)
	}
	var old [][]byte
	for i := range n {
		s := fmt.Sprint("subject-", i)
		if _, err := h1.SubjectSerializer(ctx, s, true); err != nil {
			t.Fatal(err)
		}
		ks, err := tb.Keys(ctx, s)
		if err != nil || len(ks) != 1 {
			t.Fatalf("keys of %s: %v", s, err)
		}
		old = append(old, ks[0].Wrapped)
	}
	h2, err := keys.New(keys.Options{Master: m2, Table: tb, Subjects: keys.Subjects{ThreadSeparator: ":"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tb.Close() })
	return tb, h2, old
}

// oldWrapped counts the keys of old still in the key table's file or log.
func oldWrapped(t *testing.T, path string, old [][]byte) int {
	t.Helper()
	var b []byte
	for _, f := range []string{path, path + "-wal"} {
		c, err := os.ReadFile(f)
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		b = append(b, c...)
	}
	n := 0
	for _, o := range old {
		if bytes.Contains(b, o) {
			n++
		}
	}
	return n
}

// TestRotateKEKLeavesNoOldWrappedKey: after `keys rotate-kek`, a copy of
// the key table's file and log holds no data key as the previous KEK
// wrapped it — which the retired master key, perhaps rotated because it
// leaked, would unwrap, opening today's data. On the code before,
// hundreds stayed in the log (and in the file, until checkpointed) for as
// long as any process kept the table open.
func TestRotateKEKLeavesNoOldWrappedKey(t *testing.T) {
	path := filepath.Join(t.TempDir(), "keys.db")
	_, h, old := rotatedTable(t, path, 300)
	st, err := h.RotateKEK(t.Context(), nil)
	if err != nil || st.Rewrapped != 300 {
		t.Fatalf("rotate: %+v %v", st, err)
	}
	if n := oldWrapped(t, path, old); n != 0 {
		t.Fatalf("%d data keys wrapped by the previous KEK remain in the key table's file or log", n)
	}
}

// TestRotateKEKReportsPendingCompaction: while another process reads the
// key table, its log cannot be emptied: RotateKEK says so instead of
// succeeding with the old wrapped keys in it, and running it again once
// the reader is gone finishes the job.
func TestRotateKEKReportsPendingCompaction(t *testing.T) {
	path := filepath.Join(t.TempDir(), "keys.db")
	_, h, old := rotatedTable(t, path, 50)
	stop := sqlitetest.StartReader(t, path)
	st, err := h.RotateKEK(t.Context(), nil)
	if !errors.Is(err, sqlitedb.ErrWALBusy) || st.Rewrapped != 50 {
		t.Fatalf("rotate beside a reader: %+v %v, want sqlitedb.ErrWALBusy", st, err)
	}
	if oldWrapped(t, path, old) == 0 {
		t.Fatal("the log was emptied although a reader held it")
	}
	stop()
	if st, err := h.RotateKEK(t.Context(), nil); err != nil || st.Rewrapped != 0 {
		t.Fatalf("rotate again: %+v %v", st, err)
	}
	if n := oldWrapped(t, path, old); n != 0 {
		t.Fatalf("%d data keys wrapped by the previous KEK remain", n)
	}
}
