package vaulttest

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/config"
	"github.com/memvault/memvault/store"
	"github.com/memvault/memvault/vault"
)

// Secrets are the words WhatIsEncrypted writes where README's "What is
// encrypted, and what is not" says values are encrypted: a list channel, a
// primitive string channel (which Python LangGraph keeps inline), a nested
// value, a pending write, LangGraph's special write channels
// (__interrupt__, __error__) and a memory's text (which is also what the
// store embeds: its words are a vector's words).
var Secrets = []string{"SECRETLISTalpha", "SECRETSTRbravo", "SECRETWRITEcharlie", "SECRETINTdelta", "SECRETERRecho", "SECRETMEMfoxtrot", "SECRETNESTgolf"}

// Visible are the markers WhatIsEncrypted writes where README says data is
// kept in plaintext: a thread id, a namespace label, a memory's key and a
// checkpoint metadata value.
var Visible = []string{"visiblethread77", "visiblens88", "visiblekey99", "visiblemeta66"}

// WhatIsEncrypted walks README's "What is encrypted, and what is not" as a
// user would, on one backend: the key set, vault.Open, then the saver's and
// the store's ordinary calls with a secret (Secrets) in every value README
// says is encrypted and a marker (Visible) in each place README lists as
// plaintext. dump then returns the raw database as an attacker with a copy
// of it reads it (every stored key, row or document, its bytes as
// stored); it must hold every marker (so the dump sees the data) and no
// secret. env configures a fresh, empty database of the backend
// (MEMVAULT_DSN and MEMVAULT_SCHEMA, or MEMVAULT_DB); the check adds the
// key (and the embedder, the offline default, so the memory is embedded).
func WhatIsEncrypted(t *testing.T, env map[string]string, dump func(t *testing.T) string) {
	t.Helper()
	ctx := context.Background()
	vars := map[string]string{"LANGGRAPH_AES_KEY": "0123456789abcdef0123456789abcdef"}
	for _, k := range []string{"MEMVAULT_DSN", "MEMVAULT_SCHEMA", "MEMVAULT_DB"} {
		if v, ok := env[k]; ok {
			vars[k] = v
		}
	}
	c, err := config.FromLookup(func(k string) (string, bool) { v, ok := vars[k]; return v, ok })
	if err != nil {
		t.Fatal(err)
	}
	h, err := vault.Open(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if len(h.KeyIDs()) == 0 {
		t.Fatal("vault.Open with LANGGRAPH_AES_KEY set does not encrypt")
	}
	cfg := checkpointer.Config{ThreadID: "visiblethread77"}
	v := h.Saver.NextVersion("")
	cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(0), TS: time.Now().UTC(),
		ChannelValues: map[string]any{
			"messages": []any{"SECRETLISTalpha"},
			"answer":   "SECRETSTRbravo",
			"state":    map[string]any{"deep": []any{map[string]any{"x": "SECRETNESTgolf"}}},
		},
		ChannelVersions: map[string]string{"messages": v, "answer": v, "state": v},
	}
	next, err := h.Saver.Put(ctx, cfg, cp, checkpointer.Metadata{"source": "loop", "step": 0, "note": "visiblemeta66"}, cp.ChannelVersions)
	if err != nil {
		t.Fatal(err)
	}
	for task, w := range map[string]checkpointer.Write{
		"task-1": {Channel: "answer", Value: "SECRETWRITEcharlie"},
		"task-2": {Channel: "__interrupt__", Value: []any{map[string]any{"value": "SECRETINTdelta"}}},
		"task-3": {Channel: "__error__", Value: "SECRETERRecho"},
	} {
		if err := h.Saver.PutWrites(ctx, next, []checkpointer.Write{w}, task, ""); err != nil {
			t.Fatal(err)
		}
	}
	if err := h.NeedStore(); err != nil {
		t.Fatal(err)
	}
	if err := h.Store.Put(ctx, store.Namespace{"users", "visiblens88"}, "visiblekey99", map[string]any{"text": "SECRETMEMfoxtrot lives in Lisbon"}); err != nil {
		t.Fatal(err)
	}
	// Read back through the same path: what was written is what the user
	// gets (so nothing was dropped to look encrypted), and the memory is
	// found by its words (so it was embedded).
	tup, err := h.Saver.GetTuple(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if tup.Checkpoint.ChannelValues["answer"] != "SECRETSTRbravo" || len(tup.PendingWrites) != 3 {
		t.Fatalf("read back %v, %d pending writes", tup.Checkpoint.ChannelValues, len(tup.PendingWrites))
	}
	hits, err := h.Store.Search(ctx, store.Namespace{"users"}, store.SearchOptions{Query: "SECRETMEMfoxtrot Lisbon", Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) != 1 || hits[0].Score == nil {
		t.Fatalf("the memory was not found by a semantic search (%d hits): it was not embedded", len(hits))
	}

	raw := dump(t)
	for _, s := range Secrets {
		if i := strings.Index(raw, s); i >= 0 {
			lo, hi := max(0, i-120), min(len(raw), i+60)
			t.Errorf("%q (README: encrypted) is in the raw database in plaintext: …%q…", s, raw[lo:hi])
		}
	}
	// The words of the memory, one by one (a vector's words: an embedder
	// that kept its tokens would show them).
	for _, w := range []string{"Lisbon", "lives"} {
		if strings.Contains(raw, w) {
			t.Errorf("a word of the memory, %q, is in the raw database", w)
		}
	}
	for _, s := range Visible {
		if !strings.Contains(raw, s) {
			t.Errorf("%q (README: plaintext) not found in the raw database: the dump does not see the data", s)
		}
	}
}

// PlaintextWithKeyCheck: a database of the backend written in plaintext
// (no key) and then opened with a key is refused with
// vault.ErrPlaintextData unless plaintext is allowed (the migration mode,
// MEMVAULT_ALLOW_PLAINTEXT=true), which opens it. env configures a fresh,
// empty database of the backend, as for WhatIsEncrypted.
func PlaintextWithKeyCheck(t *testing.T, env map[string]string) {
	t.Helper()
	ctx := context.Background()
	vars := map[string]string{"MEMVAULT_EMBEDDINGS": "none"}
	for _, k := range []string{"MEMVAULT_DSN", "MEMVAULT_SCHEMA", "MEMVAULT_DB"} {
		if v, ok := env[k]; ok {
			vars[k] = v
		}
	}
	open := func() (*vault.Handle, error) {
		c, err := config.FromLookup(func(k string) (string, bool) { v, ok := vars[k]; return v, ok })
		if err != nil {
			return nil, err
		}
		return vault.Open(ctx, c)
	}
	h, err := open()
	if err != nil {
		t.Fatal(err)
	}
	cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(0), TS: time.Now().UTC(),
		ChannelValues: map[string]any{"messages": []any{"plain"}}, ChannelVersions: map[string]string{"messages": h.Saver.NextVersion("")}}
	_, err = h.Saver.Put(ctx, checkpointer.Config{ThreadID: "t1"}, cp, checkpointer.Metadata{"source": "input", "step": -1}, cp.ChannelVersions)
	if err == nil {
		err = h.Store.Put(ctx, store.Namespace{"users", "a"}, "k", map[string]any{"text": "plain"})
	}
	h.Close()
	if err != nil {
		t.Fatal(err)
	}
	vars["LANGGRAPH_AES_KEY"] = "0123456789abcdef0123456789abcdef"
	if h, err := open(); !errors.Is(err, vault.ErrPlaintextData) {
		if err == nil {
			h.Close()
		}
		t.Fatalf("a plaintext database opened with a key: %v, want vault.ErrPlaintextData", err)
	}
	vars["MEMVAULT_ALLOW_PLAINTEXT"] = "true"
	h, err = open()
	if err != nil {
		t.Fatalf("plaintext allowed: %v", err)
	}
	h.Close()
}
