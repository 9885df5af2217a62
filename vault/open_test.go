package vault

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/memvault/memvault/config"
	"github.com/memvault/memvault/internal/envelope"
	"github.com/memvault/memvault/reencrypt"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/internal/binding"
	"github.com/memvault/memvault/internal/rotate"
	"github.com/memvault/memvault/serde"
	"github.com/memvault/memvault/store"

	_ "modernc.org/sqlite"
)

func lookup(env map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := env[k]; return v, ok }
}

func TestOpenSQLiteStrictAfterEncryption(t *testing.T) {
	ctx := context.Background()
	c := config.Default()
	c.DBPath = filepath.Join(t.TempDir(), "m.db")
	h, err := Open(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Store.Put(ctx, store.Namespace{"a"}, "k", map[string]any{"v": 1}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := h.Reencrypt(ctx, reencrypt.Options{}); err == nil {
		t.Fatal("Reencrypt without encryption succeeded")
	}
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	// The same file with a key: plaintext rows are refused (by Open since
	// session 22, TestPlaintextDatabaseWithKeyRefused; by each read
	// before), then accepted for migration, then re-encrypted.
	c.Keys.Primary = "0123456789abcdef0123456789abcdef"
	if _, err = Open(ctx, c); !errors.Is(err, serde.ErrPlaintextRefused) {
		t.Fatalf("strict open of plaintext: %v", err)
	}
	c.DangerousAllowPlaintext = true
	h, err = Open(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	_, st, err := h.Reencrypt(ctx, reencrypt.Options{})
	if err != nil || st.Rewritten != 1 {
		t.Fatalf("migration: %+v %v", st, err)
	}
	h.Close()
	c.DangerousAllowPlaintext = false
	h, err = Open(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if it, err := h.Store.Get(ctx, store.Namespace{"a"}, "k"); err != nil || it == nil {
		t.Fatalf("after migration: %v %v", it, err)
	}
	if ids := h.KeyIDs(); len(ids) != 1 || len(ids[0]) != 16 {
		t.Fatalf("key ids = %v", ids)
	}
}

// TestKeysNeverPrinted checks that no fmt verb and no JSON encoding of a
// Config shows its keys (verbs such as %d skip Stringer and print fields).
// TestKeyTrailingNewlineSameInBothVariables: FromEnv hands both key
// variables to crypto untouched, so a raw key with a trailing newline is
// refused alike as primary and as previous key (crypto.ErrKeyWhitespace).
// TestTTLThroughConfig: Open gives the store the TTL settings read from the
// environment, and an item past its TTL is not returned by any read,
// although no sweeper has run (the sweeper is off here); with
// MEMVAULT_TTL_REFRESH_ON_READ=false a read does not extend a TTL.
func TestTTLThroughConfig(t *testing.T) {
	ctx := t.Context()
	c, err := config.FromLookup(lookup(map[string]string{
		"MEMVAULT_DB":                  filepath.Join(t.TempDir(), "ttl.db"),
		"MEMVAULT_TTL_DEFAULT":         "150ms",
		"MEMVAULT_TTL_REFRESH_ON_READ": "false",
		"MEMVAULT_TTL_SWEEP_INTERVAL":  "off",
	}))
	if err != nil {
		t.Fatal(err)
	}
	if c.TTL.DefaultTTL != 150*time.Millisecond || !c.TTL.DisableRefreshOnRead || c.TTL.SweepInterval >= 0 {
		t.Fatalf("TTL config = %+v", c.TTL)
	}
	h, err := Open(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	ns := store.Namespace{"users", "u1"}
	if err := h.Store.Put(ctx, ns, "default-ttl", map[string]any{"text": "expires by default"}); err != nil {
		t.Fatal(err)
	}
	if err := h.Store.Put(ctx, ns, "own-ttl", map[string]any{"text": "expires by its own TTL"}, store.WithTTL(200*time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	if err := h.Store.Put(ctx, ns, "hour", map[string]any{"text": "stays an hour"}, store.WithTTL(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if err := h.Store.Put(ctx, ns, "forever", map[string]any{"text": "never expires"}, store.WithTTL(0)); err != nil {
		t.Fatal(err)
	}
	before, err := h.Store.Get(ctx, ns, "hour")
	if err != nil || before == nil {
		t.Fatalf("Get(hour) = %v, %v", before, err)
	}
	time.Sleep(300 * time.Millisecond) // past both short TTLs
	for _, key := range []string{"default-ttl", "own-ttl"} {
		if it, err := h.Store.Get(ctx, ns, key); err != nil || it != nil {
			t.Fatalf("Get(%s) after its TTL = %+v, %v; want nothing", key, it, err)
		}
	}
	hits, err := h.Store.Search(ctx, ns, store.SearchOptions{Query: "expires"})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, it := range hits {
		got = append(got, it.Key)
	}
	slices.Sort(got)
	if !slices.Equal(got, []string{"forever", "hour"}) {
		t.Fatalf("Search after expiry = %v, want [forever hour]", got)
	}
	after, err := h.Store.Get(ctx, ns, "hour")
	if err != nil || after == nil {
		t.Fatalf("Get(hour) = %v, %v", after, err)
	}
	if !after.ExpiresAt.Equal(before.ExpiresAt) {
		t.Fatalf("a read extended the TTL with refresh on read off: %v -> %v", before.ExpiresAt, after.ExpiresAt)
	}
}

// TestLeavingLangGraphMode: a database written in LangGraph mode holds
// unbound "aes" checkpoint rows; reopened in envelope mode, they are
// refused (serde.ErrUnboundRefused) — also when moved under another thread
// — until a re-encryption run with the dangerous switch rewrites them into
// the envelope. Store values are never written unbound, not even in
// LangGraph mode.
func TestLeavingLangGraphMode(t *testing.T) {
	ctx := t.Context()
	c := config.Default()
	c.DBPath = filepath.Join(t.TempDir(), "lg.db")
	c.Keys.Primary = "0123456789abcdef0123456789abcdef"
	c.Encryption = config.EncryptionLangGraph
	c.Embeddings = "none"
	h, err := Open(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(0), TS: time.Now().UTC(),
		ChannelValues:   map[string]any{"secret": "alice's diagnosis"},
		ChannelVersions: map[string]string{"secret": h.Saver.NextVersion("")}}
	alice, err := h.Saver.Put(ctx, checkpointer.Config{ThreadID: "alice"}, cp, nil, cp.ChannelVersions)
	if err != nil {
		t.Fatal(err)
	}
	cp2 := *cp
	cp2.ID, cp2.ChannelValues = checkpointer.NewID(0), map[string]any{"secret": "mallory's note"}
	if _, err := h.Saver.Put(ctx, checkpointer.Config{ThreadID: "mallory"}, &cp2, nil, cp.ChannelVersions); err != nil {
		t.Fatal(err)
	}
	if err := h.Store.Put(ctx, store.Namespace{"users", "alice"}, "k", map[string]any{"v": "memory"}); err != nil {
		t.Fatal(err)
	}
	h.Close()
	db := openRaw(t, c.DBPath)
	var storeValue string
	if err := db.QueryRow(`SELECT value FROM store`).Scan(&storeValue); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(storeValue, "+mvgcm") {
		t.Fatalf("LangGraph mode wrote a store value unbound: %s", storeValue)
	}
	// Mallory's row now holds Alice's aes ciphertext.
	if _, err := db.Exec(`UPDATE checkpoint_blobs SET blob = (SELECT blob FROM checkpoint_blobs WHERE thread_id = 'alice') WHERE thread_id = 'mallory'`); err != nil {
		t.Fatal(err)
	}

	c.Encryption = config.EncryptionEnvelope
	h, err = Open(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	for _, thread := range []string{"alice", "mallory"} {
		if _, err := h.Saver.GetTuple(ctx, checkpointer.Config{ThreadID: thread}); !errors.Is(err, serde.ErrUnboundRefused) {
			t.Fatalf("envelope mode read %s's aes row: %v, want ErrUnboundRefused", thread, err)
		}
	}
	if _, _, err := h.Reencrypt(ctx, reencrypt.Options{}); !errors.Is(err, serde.ErrUnboundRefused) {
		t.Fatalf("Reencrypt without the switch: %v, want ErrUnboundRefused", err)
	}
	h.Close()

	c.DangerouslyAcceptUnboundAES = true
	h, err = Open(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	sv, _, err := h.Reencrypt(ctx, reencrypt.Options{})
	if err != nil || sv.Rewritten != 2 {
		t.Fatalf("Reencrypt with the switch: %+v, %v; want the 2 aes rows rewritten", sv, err)
	}
	h.Close()

	c.DangerouslyAcceptUnboundAES = false
	h, err = Open(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	tu, err := h.Saver.GetTuple(ctx, alice)
	if err != nil || tu.Checkpoint.ChannelValues["secret"] != "alice's diagnosis" {
		t.Fatalf("after the migration: %v, %v", tu, err)
	}
	var aes int
	if err := db.QueryRow(`SELECT count(*) FROM checkpoint_blobs WHERE type LIKE '%+aes'`).Scan(&aes); err != nil || aes != 0 {
		t.Fatalf("%d aes rows left (%v)", aes, err)
	}
}

// openRaw opens the SQLite file directly, as an attacker with the file
// would.
func openRaw(t *testing.T, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// TestReencryptLeavesNoOldCiphertextInTheFile: after a rotation and
// re-encryption on SQLite, the bytes of the old ciphertexts are gone from
// the database file (secure_delete zeroes what rows leave behind), not
// merely unreferenced.
func TestReencryptLeavesNoOldCiphertextInTheFile(t *testing.T) {
	ctx := t.Context()
	c := config.Default()
	c.DBPath = filepath.Join(t.TempDir(), "rot.db")
	c.Keys.Primary = "0123456789abcdef0123456789abcdef"
	c.Embeddings = "none"
	h, err := Open(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 50 {
		if err := h.Store.Put(ctx, store.Namespace{"users", "u"}, fmt.Sprint("k", i), map[string]any{"text": strings.Repeat("secret memory ", 20)}); err != nil {
			t.Fatal(err)
		}
	}
	h.Close()
	var old []string
	rows, err := openRaw(t, c.DBPath).Query(`SELECT value FROM store`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var v string
		if err := rows.Scan(&v); err != nil {
			t.Fatal(err)
		}
		_, d, _ := strings.Cut(v, `"d":"`)
		old = append(old, d[:40]) // a run of the base64 ciphertext
	}
	rows.Close()
	c.Keys = config.Keys{Primary: "fedcba9876543210fedcba9876543210", Previous: []string{c.Keys.Primary}}
	h, err = Open(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	if _, st, err := h.Reencrypt(ctx, reencrypt.Options{}); err != nil || st.Rewritten != 50 {
		t.Fatalf("reencrypt: %+v %v", st, err)
	}
	h.Close()
	if _, err := openRaw(t, c.DBPath).Exec(`PRAGMA wal_checkpoint(TRUNCATE)`); err != nil {
		t.Fatal(err)
	}
	file, err := os.ReadFile(c.DBPath)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range old {
		if strings.Contains(string(file), o) {
			t.Fatalf("the old ciphertext %q… is still in the file after re-encryption", o)
		}
	}
}

// TestReencryptFinishesOnlyWhenNoOldKeyRowRemains: a process still writing
// with the old primary key beside `keys reencrypt` (here: between its
// batches) leaves rows under the old key. Re-encryption goes over the
// tables again until none remains, or fails with rotate.ErrRowsRemain if
// they keep coming — it never reports success with rows left under the old
// key (it did, and retiring the key then broke reads).
func TestReencryptFinishesOnlyWhenNoOldKeyRowRemains(t *testing.T) {
	ctx := t.Context()
	oldKey, newKey := "0123456789abcdef0123456789abcdef", "fedcba9876543210fedcba9876543210"
	c := config.Default()
	c.DBPath = filepath.Join(t.TempDir(), "race.db")
	c.Embeddings = "none"
	c.Keys.Primary = oldKey
	old, err := Open(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	defer old.Close()
	for i := range 20 {
		if err := old.Store.Put(ctx, store.Namespace{"u"}, fmt.Sprint("seed", i), map[string]any{"v": i}); err != nil {
			t.Fatal(err)
		}
	}
	c.Keys = config.Keys{Primary: newKey, Previous: []string{oldKey}}
	h, err := Open(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	written := 0
	oldWriter := func(limit int) func(done, total int64) {
		return func(done, total int64) {
			if written < limit {
				written++
				if err := old.Store.Put(ctx, store.Namespace{"u"}, fmt.Sprint("late", written), map[string]any{"v": written}); err != nil {
					t.Error(err)
				}
			}
		}
	}
	underOldKey := func() int {
		enc := h.StoreSerde.(*serde.Encrypted)
		n := 0
		rows, err := openRaw(t, c.DBPath).Query(`SELECT prefix, key, value FROM store`)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		for rows.Next() {
			var prefix, key string
			var raw []byte
			if err := rows.Scan(&prefix, &key, &raw); err != nil {
				t.Fatal(err)
			}
			tag, data, _, err := envelope.Parse(raw)
			if err != nil {
				t.Fatal(err)
			}
			info, err := enc.Inspect(tag, data, binding.AAD(binding.Item{Namespace: prefix, Key: key}))
			if err != nil {
				t.Fatal(err)
			}
			if !info.Primary {
				n++
			}
		}
		return n
	}

	// The old writer stops after a few batches: the run ends with none left.
	_, st, err := h.Reencrypt(ctx, reencrypt.Options{BatchSize: 5, Progress: oldWriter(3)})
	if err != nil {
		t.Fatalf("reencrypt: %v", err)
	}
	if n := underOldKey(); n != 0 || written != 3 {
		t.Fatalf("reencrypt reported %+v with %d rows under the old key (%d written by the old writer)", st, n, written)
	}

	// The old writer never stops: the run fails, saying how many and where.
	written = 0
	_, _, err = h.Reencrypt(ctx, reencrypt.Options{BatchSize: 5, Progress: oldWriter(1 << 30)})
	if !errors.Is(err, rotate.ErrRowsRemain) || !strings.Contains(err.Error(), "store:") {
		t.Fatalf("reencrypt beside a writer that never stops: %v, want rotate.ErrRowsRemain naming the table", err)
	}
}
