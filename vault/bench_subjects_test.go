package vault

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/config"
	"github.com/memvault/memvault/memvaulttest/pgtest"
	"github.com/memvault/memvault/memvaulttest/testkeys"
	"github.com/memvault/memvault/store"
)

// benchSubjects measures writes of a subject's values (a 500-byte checkpoint
// value, a 500-byte memory): each checks its sealing key in its transaction.
func benchSubjects(b *testing.B, c config.Config) {
	ctx := context.Background()
	c.Keys.Primary = testkeys.Key
	c.Subjects.ThreadSeparator = ":"
	c.Subjects.NamespacePrefix = []string{"users"}
	h, err := Open(ctx, c)
	if err != nil {
		b.Fatal(err)
	}
	defer h.Close()
	msg := make([]byte, 500)
	for i := range msg {
		msg[i] = 'a' + byte(i%26)
	}
	b.Run("checkpoint_put", func(b *testing.B) {
		cfg := checkpointer.Config{ThreadID: "carol:bench"}
		for i := 0; b.Loop(); i++ {
			cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(i), ChannelValues: map[string]any{"m": string(msg)}, ChannelVersions: map[string]string{"m": fmt.Sprintf("%032d.0", i+1)}}
			next, err := h.Saver.Put(ctx, cfg, cp, nil, cp.ChannelVersions)
			if err != nil {
				b.Fatal(err)
			}
			cfg = next
		}
	})
	b.Run("store_put", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			if err := h.Store.Put(ctx, store.Namespace{"users", "carol", "m"}, fmt.Sprint(i%100), map[string]any{"text": string(msg)}, store.WithoutIndex()); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkSubjectWritesSQLite(b *testing.B) {
	c := config.Default()
	c.DBPath = filepath.Join(b.TempDir(), "b.db")
	benchSubjects(b, c)
}

func BenchmarkSubjectWritesPostgres(b *testing.B) {
	c := config.Default()
	c.DSN = pgtest.SchemaDSN(b)
	benchSubjects(b, c)
}
