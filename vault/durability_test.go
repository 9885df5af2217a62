package vault

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/checkpointer/durable"
	"github.com/memvault/memvault/config"
)

// TestDurabilityAsync: MEMVAULT_DURABILITY=async gives the handle a durable
// saver inside the audit trail; Close writes every queued put, so a
// reopened database holds the whole chain and the trail verifies; and the
// retention sweeper runs over the durable saver (the inner one gets none).
func TestDurabilityAsync(t *testing.T) {
	ctx := context.Background()
	db := filepath.Join(t.TempDir(), "async.db")
	env := map[string]string{
		"MEMVAULT_DB":                    db,
		"MEMVAULT_EMBEDDINGS":            "none",
		"LANGGRAPH_AES_KEY":              "0123456789abcdef0123456789abcdef",
		"MEMVAULT_AUDIT":                 "true",
		"MEMVAULT_DURABILITY":            "async",
		"MEMVAULT_RETENTION_KEEP_LATEST": "1000",
	}
	c, err := config.FromLookup(lookup(env))
	if err != nil {
		t.Fatal(err)
	}
	if c.Durability != durable.Async {
		t.Fatalf("config: Durability = %v, want Async", c.Durability)
	}
	h, err := Open(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := unwrapSaver(h.Saver).(*durable.Saver); !ok {
		t.Fatalf("the handle's saver is %T over %T, want an audited durable saver", h.Saver, unwrapSaver(h.Saver))
	}
	const steps = 40
	cfg := checkpointer.Config{ThreadID: "chat"}
	for i := range steps {
		cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(i), ChannelValues: map[string]any{"step": fmt.Sprint(i)},
			ChannelVersions: map[string]string{"step": h.Saver.NextVersion(fmt.Sprint(i))}}
		next, err := h.Saver.Put(ctx, cfg, cp, nil, cp.ChannelVersions)
		if err != nil {
			t.Fatalf("put %d: %v", i, err)
		}
		cfg = next
	}
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}

	delete(env, "MEMVAULT_DURABILITY")
	c, err = config.FromLookup(lookup(env))
	if err != nil {
		t.Fatal(err)
	}
	h, err = Open(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	n := 0
	for _, err := range h.Saver.List(ctx, &checkpointer.Config{ThreadID: "chat"}, checkpointer.ListOptions{}) {
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	if n != steps {
		t.Errorf("after Close, the thread holds %d checkpoints, want the %d queued", n, steps)
	}
	if _, err := h.Audit.Verify(ctx); err != nil {
		t.Errorf("the trail does not verify: %v", err)
	}
}

// unwrapSaver returns what an audited saver decorates (itself otherwise).
func unwrapSaver(s checkpointer.Saver) any {
	if u, ok := s.(interface{ Unwrap() checkpointer.Saver }); ok {
		return u.Unwrap()
	}
	return s
}

// TestDurabilityRefusesUnknownMode: a misspelt mode is a configuration
// error, not a silent sync.
func TestDurabilityRefusesUnknownMode(t *testing.T) {
	_, err := config.FromLookup(lookup(map[string]string{"MEMVAULT_DURABILITY": "fast"}))
	if err == nil {
		t.Fatal("MEMVAULT_DURABILITY=fast was accepted")
	}
}
