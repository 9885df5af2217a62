package vault

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/config"
)

// TestGroupCommitThroughConfig: MEMVAULT_GROUP_COMMIT and
// MEMVAULT_SQLITE_FULL_SYNC reach the SQLite saver, and concurrent puts of
// different threads through it are all stored.
func TestGroupCommitThroughConfig(t *testing.T) {
	ctx := context.Background()
	c, err := config.FromLookup(lookup(map[string]string{
		"MEMVAULT_DB":               filepath.Join(t.TempDir(), "group.db"),
		"MEMVAULT_EMBEDDINGS":       "none",
		"LANGGRAPH_AES_KEY":         "0123456789abcdef0123456789abcdef",
		"MEMVAULT_GROUP_COMMIT":     "16",
		"MEMVAULT_SQLITE_FULL_SYNC": "true",
	}))
	if err != nil {
		t.Fatal(err)
	}
	if c.GroupCommit != 16 || !c.SQLiteFullSync {
		t.Fatalf("config: GroupCommit %d, SQLiteFullSync %v", c.GroupCommit, c.SQLiteFullSync)
	}
	h, err := Open(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	g, ok := unwrapSaver(h.Saver).(interface{ GroupCommit() int })
	if !ok || g.GroupCommit() != 16 {
		t.Fatalf("the saver (%T) does not commit in groups of 16", unwrapSaver(h.Saver))
	}
	const writers = 16
	var wg sync.WaitGroup
	errs := make([]error, writers)
	for w := range writers {
		wg.Go(func() {
			cfg := checkpointer.Config{ThreadID: fmt.Sprint("t-", w)}
			for i := range 5 {
				cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(i), ChannelValues: map[string]any{"step": fmt.Sprint(i)},
					ChannelVersions: map[string]string{"step": h.Saver.NextVersion(fmt.Sprint(i))}}
				next, err := h.Saver.Put(ctx, cfg, cp, nil, cp.ChannelVersions)
				if err != nil {
					errs[w] = err
					return
				}
				cfg = next
			}
		})
	}
	wg.Wait()
	for w, err := range errs {
		if err != nil {
			t.Fatalf("writer %d: %v", w, err)
		}
		tp, err := h.Saver.GetTuple(ctx, checkpointer.Config{ThreadID: fmt.Sprint("t-", w)})
		if err != nil || tp == nil || tp.Checkpoint.ChannelValues["step"] != "4" {
			t.Fatalf("thread t-%d: %v, %v", w, tp, err)
		}
	}
}
