package trpcagent_test

import (
	"crypto/sha256"
	"encoding/hex"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"trpc.group/trpc-go/trpc-agent-go/memory"

	"github.com/memvault/memvault/adapters/trpcagent"
	"github.com/memvault/memvault/embeddings"
	"github.com/memvault/memvault/memvaulttest/testkeys"
	"github.com/memvault/memvault/store"
	"github.com/memvault/memvault/store/sqlitestore"
)

// BenchmarkAddMemory: AddMemory on an encrypted, indexed SQLite store
// (one read of the user's id key, then the write),
// next to "raw-put", the one store.Put of the same value under an unkeyed
// SHA-256 id that AddMemory was before session 30. Each iteration adds a
// new memory.
func BenchmarkAddMemory(b *testing.B) {
	st, err := sqlitestore.Open(b.Context(), filepath.Join(b.TempDir(), "m.db"), sqlitestore.Options{
		Index: &store.IndexConfig{Embedder: embeddings.NewUnkeyedHashing(256)},
		Serde: testkeys.Encrypting(b),
	})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	svc, err := trpcagent.NewMemoryService(st, trpcagent.MemoryOptions{})
	if err != nil {
		b.Fatal(err)
	}
	uk := memory.UserKey{AppName: "desk", UserID: "carol"}
	ns := store.Namespace{"raw", "desk", "memories", "carol"}
	b.Run("adapter", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			if err := svc.AddMemory(b.Context(), uk, "Carol takes the 7:40 train, trip "+strconv.Itoa(i)+" "+b.Name(), []string{"travel"}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("raw-put", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			text := "Carol takes the 7:40 train, trip " + strconv.Itoa(i) + " " + b.Name()
			sum := sha256.Sum256([]byte("memory:" + text + "|app:desk|user:carol"))
			v := map[string]any{"memory": text, "topics": []any{"travel"}, "kind": "fact", "last_updated_ns": time.Now().UnixNano()}
			if err := st.Put(b.Context(), ns, hex.EncodeToString(sum[:]), v, store.WithIndex("memory")); err != nil {
				b.Fatal(err)
			}
		}
	})
}
