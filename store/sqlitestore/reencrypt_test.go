package sqlitestore_test

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memvault/memvault/internal/carve"
	"github.com/memvault/memvault/reencrypt"
	"github.com/memvault/memvault/serde"
	"github.com/memvault/memvault/store"
	"github.com/memvault/memvault/store/sqlitestore"
	"github.com/memvault/memvault/store/storetest"
)

func TestReencrypt(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rotate.db")
	storetest.RunReencrypt(t, func(t *testing.T, s serde.Serializer) store.Store {
		st, err := sqlitestore.Open(context.Background(), path, sqlitestore.Options{Serde: s})
		if err != nil {
			t.Fatal(err)
		}
		return st
	})
}

func TestErasure(t *testing.T) {
	path := filepath.Join(t.TempDir(), "erase.db")
	storetest.RunErasure(t, nil, func(t *testing.T, s serde.Serializer) store.Store {
		st, err := sqlitestore.Open(context.Background(), path, sqlitestore.Options{Serde: s})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		return st
	})
}

// TestReencryptCompactsTheFile: Store.Reencrypt by itself (a program using
// the store, not the CLI) leaves no envelope under the retired key in the
// database file or its log after plaintext → K1 → K2. On the code before
// compaction, the log held the K1 pages and the unallocated gaps of
// rebalanced pages held copies of K1 cells.
func TestReencryptCompactsTheFile(t *testing.T) {
	ctx := context.Background()
	const n = 600
	path := filepath.Join(t.TempDir(), "carve.db")
	toK1, toK2, k1 := carve.Rotation(t)
	open := func(s serde.Serializer) *sqlitestore.Store {
		st, err := sqlitestore.Open(ctx, path, sqlitestore.Options{Serde: s})
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	st := open(nil)
	for i := range n {
		if err := st.Put(ctx, store.Namespace{"users", fmt.Sprint("u", i%10)}, fmt.Sprint("k", i), map[string]any{"text": strings.Repeat("memory ", 1+(i*104729)%83)}); err != nil {
			t.Fatal(err)
		}
	}
	st.Close()
	st = open(toK1)
	if rs, err := st.Reencrypt(ctx, reencrypt.Options{}); err != nil || rs.Rewritten != n {
		t.Fatalf("plaintext to K1: %+v %v", rs, err)
	}
	st.Close()
	raw, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	values, err := carve.Stored(ctx, raw)
	raw.Close()
	if err != nil || len(values) != n {
		t.Fatalf("%d values under K1: %v", len(values), err)
	}
	st = open(toK2)
	defer st.Close()
	if rs, err := st.Reencrypt(ctx, reencrypt.Options{}); err != nil || rs.Rewritten != n {
		t.Fatalf("K1 to K2: %+v %v", rs, err)
	}
	f, err := carve.Scan([]string{path, path + "-wal"}, k1, values)
	if err != nil {
		t.Fatal(err)
	}
	if f.Headers != 0 {
		t.Fatalf("%d images under K1 in the file or its log, %d of them open with K1", f.Headers, f.Opened)
	}
}
