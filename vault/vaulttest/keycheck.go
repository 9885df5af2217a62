package vaulttest

import (
	"errors"
	"testing"

	"github.com/memvault/memvault/config"
	"github.com/memvault/memvault/store"
	"github.com/memvault/memvault/vault"
)

// StoreOnlyKeyCheck checks that vault.Open probes the store's memories as
// well as a thread for the key they are sealed under: a database holding
// encrypted memories and no thread, opened without the key, is refused
// with vault.ErrKeyNotLoaded (on MongoDB and Redis it opened, every read of
// a memory failed, and new memories were written in plaintext beside
// them). env configures a fresh, empty database of the backend (its
// MEMVAULT_DSN and MEMVAULT_SCHEMA); the check adds the key and the rest.
func StoreOnlyKeyCheck(t *testing.T, env map[string]string) {
	t.Helper()
	ctx := t.Context()
	env = map[string]string{
		"MEMVAULT_DSN":        env["MEMVAULT_DSN"],
		"MEMVAULT_SCHEMA":     env["MEMVAULT_SCHEMA"],
		"MEMVAULT_EMBEDDINGS": "none",
		"LANGGRAPH_AES_KEY":   "0123456789abcdef0123456789abcdef",
	}
	open := func() (*vault.Handle, error) {
		c, err := config.FromLookup(func(k string) (string, bool) { v, ok := env[k]; return v, ok })
		if err != nil {
			t.Fatal(err)
		}
		return vault.Open(ctx, c)
	}
	h, err := open()
	if err != nil {
		t.Fatal(err)
	}
	ns := store.Namespace{"users", "ann"}
	if err := h.Store.Put(ctx, ns, "diet", map[string]any{"text": "no peanuts"}); err != nil {
		t.Fatal(err)
	}
	_ = h.Close()

	delete(env, "LANGGRAPH_AES_KEY")
	h, err = open()
	if errors.Is(err, vault.ErrKeyNotLoaded) {
		return
	}
	if err != nil {
		t.Fatalf("Open without the key: %v, want vault.ErrKeyNotLoaded", err)
	}
	defer h.Close()
	_, getErr := h.Store.Get(ctx, ns, "diet")
	putErr := h.Store.Put(ctx, ns, "new", map[string]any{"text": "written in plaintext"})
	t.Fatalf("Open without the key of the stored memories succeeded (want vault.ErrKeyNotLoaded); then Get of a sealed memory: %.200v; Put of a new one: %v", getErr, putErr)
}
