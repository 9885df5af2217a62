package mongovault_test

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memvault/memvault/audit"
	"github.com/memvault/memvault/backends/mongodb/mongotest"
	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/store"
	"github.com/memvault/memvault/vault"
)

// TestAuditThroughConfig: MEMVAULT_AUDIT on a mongodb:// DSN, the trail in
// a SQLite file (MEMVAULT_AUDIT_TABLE): vault.Open opens it (before:
// refused with vault.ErrUnsupported), a put and a memory are recorded and
// the chain verifies; the database is marked, so a later Open without
// audit is refused (vault.ErrAuditRequired); without MEMVAULT_AUDIT_TABLE
// Open refuses, naming it.
func TestAuditThroughConfig(t *testing.T) {
	ctx := t.Context()
	env := map[string]string{
		"MEMVAULT_DSN":        mongotest.URI(t),
		"MEMVAULT_SCHEMA":     mongotest.Database(t).Name(),
		"MEMVAULT_EMBEDDINGS": "none",
		"LANGGRAPH_AES_KEY":   "0123456789abcdef0123456789abcdef",
		"MEMVAULT_AUDIT":      "true",
	}
	if _, err := openEnv(t, env); !errors.Is(err, vault.ErrUnsupported) || !strings.Contains(err.Error(), "MEMVAULT_AUDIT_TABLE") {
		t.Fatalf("Open with the audit trail and no MEMVAULT_AUDIT_TABLE: %v; want ErrUnsupported naming it", err)
	}
	env["MEMVAULT_AUDIT_TABLE"] = filepath.Join(t.TempDir(), "audit.db")
	h, err := openEnv(t, env)
	if err != nil {
		t.Fatalf("Open with the audit trail on MongoDB: %v", err)
	}
	cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(0), TS: time.Now(),
		ChannelValues: map[string]any{"notes": "x"}, ChannelVersions: map[string]string{"notes": h.Saver.NextVersion("")}}
	if _, err := h.Saver.Put(ctx, checkpointer.Config{ThreadID: "t1"}, cp, checkpointer.Metadata{}, cp.ChannelVersions); err != nil {
		t.Fatal(err)
	}
	if err := h.Store.Put(ctx, store.Namespace{"users", "ann"}, "diet", map[string]any{"text": "no peanuts"}); err != nil {
		t.Fatal(err)
	}
	if err := h.Audit.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	var ops []string
	if err := h.Audit.Records(ctx, audit.Filter{}, func(r audit.Record) error { ops = append(ops, string(r.Op)); return nil }); err != nil {
		t.Fatal(err)
	}
	if n, err := h.Audit.Verify(ctx); err != nil || n < 2 {
		t.Fatalf("Verify: %d records, %v; ops %v", n, err, ops)
	}
	_ = h.Close()
	delete(env, "MEMVAULT_AUDIT")
	delete(env, "MEMVAULT_AUDIT_TABLE")
	if h, err := openEnv(t, env); !errors.Is(err, vault.ErrAuditRequired) {
		if err == nil {
			_ = h.Close()
		}
		t.Fatalf("Open without audit of a database whose trail began: %v; want ErrAuditRequired", err)
	}
}
