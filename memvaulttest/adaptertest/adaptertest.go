package adaptertest

import (
	"path/filepath"
	"testing"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/checkpointer/memsaver"
	"github.com/memvault/memvault/checkpointer/pgsaver"
	"github.com/memvault/memvault/checkpointer/sqlitesaver"
	"github.com/memvault/memvault/embeddings"
	"github.com/memvault/memvault/memvaulttest/pgtest"
	"github.com/memvault/memvault/memvaulttest/testkeys"
	"github.com/memvault/memvault/serde"
	"github.com/memvault/memvault/store"
	"github.com/memvault/memvault/store/memstore"
	"github.com/memvault/memvault/store/pgstore"
	"github.com/memvault/memvault/store/sqlitestore"
)

// Options picks how Backends opens each backend. The zero value gives
// encrypted SQL backends and stores without an index.
type Options struct {
	// Indexed gives each store a semantic index: the offline embedder,
	// 256 dimensions.
	Indexed bool
	// Plaintext leaves the SQL backends unencrypted.
	Plaintext bool
}

// Backend is one memvault backend's data. Its openers return a new handle
// on the same data each call (the memory driver's one instance, the same
// SQLite file, the same PostgreSQL schema), closed when the test ends.
type Backend struct {
	// Name is "memory", "sqlite" or "postgres", with "/encrypted" when the
	// backend seals its values.
	Name string
	// Store opens the backend's store.
	Store func(t testing.TB) store.Store
	// Saver opens the backend's checkpointer.
	Saver func(t testing.TB) checkpointer.Saver
	// Files are the SQLite database's files (nil for the others), for
	// testkeys.NoPlaintext.
	Files []string
}

// Backends returns the three backends for t. The memory driver holds Go
// values and has nothing to encrypt, so it is plaintext either way.
func Backends(t testing.TB, opt Options) []Backend {
	t.Helper()
	var ser serde.Serializer
	suffix := ""
	if !opt.Plaintext {
		ser, suffix = testkeys.Encrypting(t), "/encrypted"
	}
	index := func() *store.IndexConfig {
		if !opt.Indexed {
			return nil
		}
		return &store.IndexConfig{Embedder: embeddings.NewUnkeyedHashing(256)}
	}
	dir := t.TempDir()
	storeFile, saverFile := filepath.Join(dir, "store.db"), filepath.Join(dir, "saver.db")
	pool := pgtest.Pool(t)
	var memStore store.Store
	var memSaver checkpointer.Saver
	return []Backend{
		{
			Name: "memory",
			Store: func(t testing.TB) store.Store {
				if memStore == nil {
					s, err := memstore.New(memstore.Options{Index: index()})
					check(t, err)
					t.Cleanup(func() { s.Close() })
					memStore = s
				}
				return memStore
			},
			Saver: func(t testing.TB) checkpointer.Saver {
				if memSaver == nil {
					s, err := memsaver.New(memsaver.Options{})
					if err != nil {
						t.Fatal(err)
					}
					memSaver = s
				}
				return memSaver
			},
		},
		{
			Name: "sqlite" + suffix,
			Store: func(t testing.TB) store.Store {
				s, err := sqlitestore.Open(t.Context(), storeFile, sqlitestore.Options{Index: index(), Serde: ser})
				check(t, err)
				t.Cleanup(func() { s.Close() })
				return s
			},
			Saver: func(t testing.TB) checkpointer.Saver {
				s, err := sqlitesaver.Open(t.Context(), saverFile, sqlitesaver.Options{Serde: ser})
				check(t, err)
				t.Cleanup(func() { s.Close() })
				return s
			},
			Files: []string{storeFile, storeFile + "-wal", saverFile, saverFile + "-wal"},
		},
		{
			Name: "postgres" + suffix,
			Store: func(t testing.TB) store.Store {
				s, err := pgstore.New(pool, pgstore.Options{Index: index(), Serde: ser})
				check(t, err)
				check(t, s.Setup(t.Context()))
				t.Cleanup(func() { s.Close() })
				return s
			},
			Saver: func(t testing.TB) checkpointer.Saver {
				s, err := pgsaver.New(pool, pgsaver.Options{Serde: ser})
				check(t, err)
				check(t, s.Setup(t.Context()))
				return s
			},
		},
	}
}

func check(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
