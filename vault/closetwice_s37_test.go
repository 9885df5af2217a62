package vault

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/checkpointer/durable"
	"github.com/memvault/memvault/config"
	"github.com/memvault/memvault/memvaulttest/testkeys"
)

// TestCloseAfterSaverClosed: a handle with the audit trail and a queuing
// durability mode, whose saver the caller closed first (h.Saver has a
// Close), closes without error; before, the handle's Close reached the
// closed durable saver again and failed with durable.ErrClosed.
func TestCloseAfterSaverClosed(t *testing.T) {
	ctx := context.Background()
	c := config.Default()
	c.DBPath = filepath.Join(t.TempDir(), "agent.db")
	c.Keys.Primary = testkeys.Key
	c.Audit = true
	c.Durability = durable.Exit
	h, err := Open(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(0), ChannelValues: map[string]any{"a": "1"},
		ChannelVersions: map[string]string{"a": h.Saver.NextVersion("")}}
	if _, err := h.Saver.Put(ctx, checkpointer.Config{ThreadID: "t"}, cp, nil, cp.ChannelVersions); err != nil {
		t.Fatal(err)
	}
	closer, ok := h.Saver.(interface{ Close() error })
	if !ok {
		t.Fatal("the audited saver has no Close")
	}
	if err := closer.Close(); err != nil {
		t.Fatal(err)
	}
	if err := h.Close(); err != nil {
		t.Fatalf("Close of the handle after its saver's: %v", err)
	}
	h, err = Open(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if n, err := h.Audit.Verify(ctx); err != nil || n < 1 {
		t.Fatalf("the trail holds %d records (%v), want the put's", n, err)
	}
	if tp, err := h.Saver.GetTuple(ctx, checkpointer.Config{ThreadID: "t"}); err != nil || tp == nil {
		t.Fatalf("the put: %v, %v", tp, err)
	}
}
