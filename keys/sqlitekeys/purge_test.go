package sqlitekeys_test

import (
	"bytes"
	"crypto/rand"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/memvault/memvault/keys"
	"github.com/memvault/memvault/keys/sqlitekeys"
	"github.com/memvault/memvault/memvaulttest/sqlitetest"
)

// fileHolds reports which of the key table's files hold b.
func fileHolds(t *testing.T, path string, b []byte) []string {
	t.Helper()
	var in []string
	for _, f := range []string{path, path + "-wal"} {
		data, err := os.ReadFile(f)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(data, b) {
			in = append(in, filepath.Base(f))
		}
	}
	return in
}

// A reader in another process that began before the keys were destroyed
// keeps a copy of them in the log: the purge must not report success then
// (on the code before erasure records, Destroy ignored the busy checkpoint
// and the key stayed in the file), and must succeed, with the bytes gone
// from the file and its log, once the reader ends.
func TestPurgeWaitsForAReader(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "keys.db")
	tb, err := sqlitekeys.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Close()
	wrapped := make([]byte, 60)
	rand.Read(wrapped)
	now := time.Now().UTC()
	for i, s := range []string{"carol", "dave"} {
		w := wrapped
		if i > 0 {
			w = bytes.Repeat([]byte{byte(i)}, 60)
		}
		if err := tb.Insert(ctx, keys.WrappedKey{Subject: s, Version: 1, ID: "id-" + s, KEK: "kek", Wrapped: w, Created: now}); err != nil {
			t.Fatal(err)
		}
	}
	if in := fileHolds(t, path, wrapped); len(in) == 0 {
		t.Fatal("the key is not in the files before the erasure: the check below proves nothing")
	}
	stop := sqlitetest.StartReader(t, path)
	e, err := tb.StartErasure(ctx, "carol", now)
	if err != nil {
		t.Fatal(err)
	}
	var said []string
	err = tb.Purge(ctx, e, keys.PurgeOptions{Wait: 300 * time.Millisecond, Progress: func(m string) { said = append(said, m) }})
	if !errors.Is(err, keys.ErrErasurePending) {
		t.Fatalf("purge with a reader holding the key: %v, want ErrErasurePending", err)
	}
	if in := fileHolds(t, path, wrapped); len(in) == 0 {
		t.Log("the reader did not keep the key in the files this time; the pending report was conservative")
	}
	if len(said) == 0 {
		t.Error("the purge waited without saying why")
	}
	stop()
	if err := tb.Purge(ctx, e, keys.PurgeOptions{Wait: 5 * time.Second}); err != nil {
		t.Fatalf("purge after the reader ended: %v", err)
	}
	if in := fileHolds(t, path, wrapped); len(in) > 0 {
		t.Fatalf("the destroyed key's bytes are still in %v", in)
	}
	if in := fileHolds(t, path, bytes.Repeat([]byte{1}, 60)); len(in) == 0 {
		t.Fatal("dave's key is gone too")
	}
}
