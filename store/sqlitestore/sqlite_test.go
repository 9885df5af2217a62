package sqlitestore

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/memvault/memvault/internal/envelope"
	"github.com/memvault/memvault/memvaulttest/testkeys"

	"github.com/memvault/memvault/crypto"
	"github.com/memvault/memvault/internal/sqlitedb"
	"github.com/memvault/memvault/serde"
	"github.com/memvault/memvault/store"
	"github.com/memvault/memvault/store/storetest"
)

func openStore(t testing.TB, path string, opts Options) *Store {
	t.Helper()
	s, err := Open(context.Background(), path, opts)
	if err != nil {
		t.Fatalf("Open(%q): %v", path, err)
	}
	return s
}

// encrypted returns memvault's default encrypting serializer under a fixed
// test key.
func encrypted(t testing.TB, opts ...serde.EncryptedOption) serde.Serializer {
	t.Helper()
	k, err := crypto.ParseRawKey("0123456789abcdef0123456789abcdef")
	if err != nil {
		t.Fatal(err)
	}
	ring, err := crypto.NewKeyring(k)
	if err != nil {
		t.Fatal(err)
	}
	e, err := serde.NewEncrypted(nil, ring, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func runConformance(t *testing.T, sd func(t testing.TB) serde.Serializer, cacheBytes int64) {
	cfgOpts := func(t *testing.T, cfg storetest.Config) Options {
		return Options{Index: cfg.Index, TTL: cfg.TTL, Now: cfg.Now, Serde: sd(t), VectorCacheBytes: cacheBytes}
	}
	t.Run("Memory", func(t *testing.T) {
		storetest.Run(t, func(t *testing.T, cfg storetest.Config) store.Store {
			return openStore(t, ":memory:", cfgOpts(t, cfg))
		})
	})
	t.Run("File", func(t *testing.T) {
		storetest.Run(t, func(t *testing.T, cfg storetest.Config) store.Store {
			return openStore(t, filepath.Join(t.TempDir(), "store.db"), cfgOpts(t, cfg))
		})
	})
}

func TestConformance(t *testing.T) {
	runConformance(t, func(testing.TB) serde.Serializer { return nil }, 0)
}

func TestConformanceEncrypted(t *testing.T) {
	runConformance(t, func(t testing.TB) serde.Serializer { return encrypted(t) }, 0)
}

// TestConformanceCodeIndex runs the suite with searches ranked by the code
// index, as large stores are (the suite's stores are small enough for the
// exact in-process copy).
func TestConformanceCodeIndex(t *testing.T) {
	codeIndexOnly(t)
	runConformance(t, func(testing.TB) serde.Serializer { return nil }, 0)
}

// TestConformanceNoVectorCache runs the suite with searches scanning the
// vectors in SQLite.
func TestConformanceNoVectorCache(t *testing.T) {
	runConformance(t, func(testing.TB) serde.Serializer { return nil }, -1)
}

// TestVectorCacheCoherence checks that a store sees vectors written by
// another process (here: another store on its own connections to the same
// file, with its own cache) and its own writes, deletes and sweeps.
func TestVectorCacheCoherence(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "coherent.db")
	clock := storetest.NewClock()
	idx := &store.IndexConfig{Embedder: storetest.NewAxisEmbedder(storetest.Vocabulary...)}
	a := openStore(t, path, Options{Index: idx, TTL: &store.TTLConfig{SweepInterval: -1}, Now: clock.Now})
	defer a.Close()
	raw, err := sql.Open("sqlite", path+"?_pragma=busy_timeout(5000)&_pragma=foreign_keys(1)")
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	b, err := New(ctx, raw, Options{Index: idx, Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	ns := store.Namespace{"n"}
	top := func(s *Store, query string) string {
		t.Helper()
		res, err := s.Search(ctx, ns, store.SearchOptions{Query: query, Limit: 1})
		if err != nil {
			t.Fatal(err)
		}
		if len(res) == 0 || res[0].Score == nil {
			return ""
		}
		return res[0].Key
	}
	if err := a.Put(ctx, ns, "apple", map[string]any{"t": "apple"}); err != nil {
		t.Fatal(err)
	}
	if got := top(a, "apple"); got != "apple" {
		t.Fatalf("own write: top %q", got)
	}
	// Another process writes: a must reload.
	if err := b.Put(ctx, ns, "cherry", map[string]any{"t": "cherry"}); err != nil {
		t.Fatal(err)
	}
	if got := top(a, "cherry"); got != "cherry" {
		t.Fatalf("other process's write: top %q", got)
	}
	// Own re-put changes the vector; own delete removes it.
	if err := a.Put(ctx, ns, "apple", map[string]any{"t": "date"}); err != nil {
		t.Fatal(err)
	}
	if got := top(a, "date"); got != "apple" {
		t.Fatalf("own re-put: top %q", got)
	}
	if got := top(b, "date"); got != "apple" {
		t.Fatalf("other store after re-put: top %q", got)
	}
	if err := a.Delete(ctx, ns, "cherry"); err != nil {
		t.Fatal(err)
	}
	if got := top(b, "cherry"); got == "cherry" {
		t.Fatal("deleted item still ranked by the other store")
	}
	// A sweep drops expired vectors.
	if err := a.Put(ctx, ns, "banana", map[string]any{"t": "banana"}, store.WithTTL(time.Minute)); err != nil {
		t.Fatal(err)
	}
	if got := top(a, "banana"); got != "banana" {
		t.Fatalf("before sweep: top %q", got)
	}
	clock.Advance(time.Hour)
	if n, err := a.Sweep(ctx); err != nil || n != 1 {
		t.Fatalf("Sweep = %d, %v", n, err)
	}
	if got := top(a, "banana"); got == "banana" {
		t.Fatal("swept item still ranked")
	}
}

// TestConformanceWrapped runs the suite on a *sql.DB the caller opened.
func TestConformanceWrapped(t *testing.T) {
	storetest.Run(t, func(t *testing.T, cfg storetest.Config) store.Store {
		db, err := sql.Open("sqlite", filepath.Join(t.TempDir(), "w.db")+
			"?_pragma=journal_mode(WAL)&_pragma=busy_timeout(5000)&_pragma=foreign_keys(1)")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		s, err := New(t.Context(), db, Options{Index: cfg.Index, TTL: cfg.TTL, Now: cfg.Now})
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}

// TestEncryptedAtRest checks the envelope in the value column, that a row
// moved to another key does not decrypt, and that plaintext rows are
// refused unless the serializer allows them.
func TestEncryptedAtRest(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "enc.db")
	s := openStore(t, path, Options{Serde: encrypted(t)})
	defer s.Close()
	ns := store.Namespace{"users", "u1"}
	if err := s.Put(ctx, ns, "k", map[string]any{"secret": "diagnosis X"}); err != nil {
		t.Fatal(err)
	}
	var raw []byte
	if err := s.db.Reader().QueryRow(`SELECT value FROM store`).Scan(&raw); err != nil {
		t.Fatal(err)
	}
	tag, _, ok, err := envelope.Parse(raw)
	if err != nil || !ok || tag != "json+mvgcm" || bytes.Contains(raw, []byte("diagnosis")) {
		t.Fatalf("value column %s is not an encrypted envelope", raw)
	}
	it, err := s.Get(ctx, ns, "k")
	if err != nil || it == nil || it.Value["secret"] != "diagnosis X" {
		t.Fatalf("Get = %v, %v", it, err)
	}
	// Filters run after decryption.
	res, err := s.Search(ctx, store.Namespace{"users"}, store.SearchOptions{Filter: map[string]any{"secret": "diagnosis X"}})
	if err != nil || len(res) != 1 {
		t.Fatalf("filtered search = %v, %v", res, err)
	}

	// Copy the row to another user: it must not decrypt there.
	if _, err := s.db.Writer().Exec(`INSERT INTO store SELECT 'users.u2', key, value, created_at, updated_at, expires_at, ttl_minutes FROM store`); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(ctx, store.Namespace{"users", "u2"}, "k"); !errors.Is(err, serde.ErrDecrypt) {
		t.Fatalf("Get of a moved row = %v, want ErrDecrypt", err)
	}

	// A plaintext row (written before encryption was on) is refused...
	if _, err := s.db.Writer().Exec(`INSERT INTO store VALUES ('plain', 'k', '{"a": 1}', 0, 0, NULL, NULL)`); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(ctx, store.Namespace{"plain"}, "k"); !errors.Is(err, serde.ErrPlaintextRefused) {
		t.Fatalf("Get of a plaintext row = %v, want ErrPlaintextRefused", err)
	}
	// ...unless plaintext reads are allowed.
	lenient := openStore(t, path, Options{Serde: encrypted(t, serde.WithDangerousPlaintextReads())})
	defer lenient.Close()
	if it, err := lenient.Get(ctx, store.Namespace{"plain"}, "k"); err != nil || it == nil || it.Value["a"] != int64(1) {
		t.Fatalf("lenient Get = %v, %v", it, err)
	}
}

// TestPrefixIsCaseSensitive guards against SQLite's case-insensitive LIKE.
func TestPrefixIsCaseSensitive(t *testing.T) {
	ctx := context.Background()
	s := openStore(t, ":memory:", Options{})
	defer s.Close()
	for _, ns := range []store.Namespace{{"A", "b"}, {"a", "b"}, {"a", "B"}, {"a/"}, {"a"}} {
		if err := s.Put(ctx, ns, "k", map[string]any{"ns": ns.String()}); err != nil {
			t.Fatal(err)
		}
	}
	for prefix, want := range map[string]int{"a": 3, "A": 1, "a.b": 1, "a.B": 1, "a/": 1} {
		res, err := s.Search(ctx, store.ParseNamespace(prefix), store.SearchOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(res) != want {
			t.Errorf("Search(%q) = %d items, want %d", prefix, len(res), want)
		}
	}
}

// TestVectorsCascade checks that deletes and sweeps leave no vectors.
func TestVectorsCascade(t *testing.T) {
	ctx := context.Background()
	clock := storetest.NewClock()
	s := openStore(t, ":memory:", Options{
		Index: &store.IndexConfig{Embedder: storetest.NewAxisEmbedder(storetest.Vocabulary...)},
		TTL:   &store.TTLConfig{SweepInterval: -1},
		Now:   clock.Now,
	})
	defer s.Close()
	vectors := func() int {
		var n int
		if err := s.db.Reader().QueryRow(`SELECT count(*) FROM store_vectors`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	ns := store.Namespace{"n"}
	if err := s.Put(ctx, ns, "a", map[string]any{"t": "apple"}); err != nil {
		t.Fatal(err)
	}
	if err := s.Put(ctx, ns, "b", map[string]any{"t": "banana"}, store.WithTTL(time.Minute)); err != nil {
		t.Fatal(err)
	}
	if n := vectors(); n != 2 {
		t.Fatalf("%d vectors, want 2", n)
	}
	if err := s.Delete(ctx, ns, "a"); err != nil {
		t.Fatal(err)
	}
	clock.Advance(2 * time.Minute)
	if n, err := s.Sweep(ctx); err != nil || n != 1 {
		t.Fatalf("Sweep = %d, %v", n, err)
	}
	if n := vectors(); n != 0 {
		t.Fatalf("%d vectors left after delete and sweep", n)
	}
}

// TestSweeperStopsOnClose runs the background sweeper briefly.
func TestSweeperStopsOnClose(t *testing.T) {
	ctx := context.Background()
	clock := storetest.NewClock()
	s := openStore(t, filepath.Join(t.TempDir(), "sweep.db"), Options{
		TTL: &store.TTLConfig{SweepInterval: time.Millisecond},
		Now: clock.Now,
	})
	if err := s.Put(ctx, store.Namespace{"n"}, "k", map[string]any{}, store.WithTTL(time.Minute)); err != nil {
		t.Fatal(err)
	}
	clock.Advance(time.Hour)
	// Wait for the sweeper (no timing assertion: the test only ends when
	// the sweeper has run).
	for {
		var n int
		if err := s.db.Reader().QueryRow(`SELECT count(*) FROM store`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(ctx, store.Namespace{"n"}, "k"); !errors.Is(err, store.ErrClosed) {
		t.Fatalf("Get after Close = %v, want ErrClosed", err)
	}
}

// TestSharesHandleWithSaver checks that the store uses the process-wide
// handle of its file, the one checkpointer/sqlitesaver opens on the same path.
func TestSharesHandleWithSaver(t *testing.T) {
	path := filepath.Join(t.TempDir(), "agent.db")
	s := openStore(t, path, Options{})
	defer s.Close()
	h, err := sqlitedb.Open(path, sqlitedb.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if h.Writer() != s.db.Writer() || h.Reader() != s.db.Reader() {
		t.Fatal("the store does not share the file's handle")
	}
}

// TestConformanceSubjects runs the suite with per-subject keys: each
// namespace's values sealed under the data key of the subject it names.
func TestConformanceSubjects(t *testing.T) {
	runConformance(t, func(t testing.TB) serde.Serializer { return testkeys.Subjects(t) }, 0)
}
