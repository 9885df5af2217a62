package vaulttest

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/memvault/memvault/config"
	"github.com/memvault/memvault/store"
	"github.com/memvault/memvault/vault"
)

// ErrCheckFailed is what CheckStoreOnlyKey returns when the backend does
// not keep the promise it checks.
var ErrCheckFailed = errors.New("vaulttest: check failed")

// StoreOnlyKeyCheck checks that vault.Open probes the store's memories as
// well as a thread for the key they are sealed under: a database holding
// encrypted memories and no thread, opened without the key, is refused
// with vault.ErrKeyNotLoaded (on MongoDB and Redis it opened, every read of
// a memory failed, and new memories were written in plaintext beside
// them). env configures a fresh, empty database of the backend (its
// MEMVAULT_DSN and MEMVAULT_SCHEMA, or MEMVAULT_DB for a SQLite file); the
// check adds the key and the rest.
func StoreOnlyKeyCheck(t *testing.T, env map[string]string) {
	t.Helper()
	if err := CheckStoreOnlyKey(t.Context(), env); err != nil {
		t.Fatal(err)
	}
}

// CheckStoreOnlyKey is StoreOnlyKeyCheck outside a test: nil when the
// backend keeps the promise, an error wrapping ErrCheckFailed when it does
// not, any other error when the database could not be used.
func CheckStoreOnlyKey(ctx context.Context, env map[string]string) error {
	given := env
	env = map[string]string{
		"MEMVAULT_EMBEDDINGS": "none",
		"LANGGRAPH_AES_KEY":   "0123456789abcdef0123456789abcdef",
	}
	for _, k := range []string{"MEMVAULT_DSN", "MEMVAULT_SCHEMA", "MEMVAULT_DB"} {
		if v, ok := given[k]; ok {
			env[k] = v
		}
	}
	open := func() (*vault.Handle, error) {
		c, err := config.FromLookup(func(k string) (string, bool) { v, ok := env[k]; return v, ok })
		if err != nil {
			return nil, err
		}
		return vault.Open(ctx, c)
	}
	h, err := open()
	if err != nil {
		return err
	}
	ns := store.Namespace{"users", "ann"}
	err = h.Store.Put(ctx, ns, "diet", map[string]any{"text": "no peanuts"})
	if cerr := h.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}

	delete(env, "LANGGRAPH_AES_KEY")
	h, err = open()
	if errors.Is(err, vault.ErrKeyNotLoaded) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("%w: Open without the key: %v, want vault.ErrKeyNotLoaded", ErrCheckFailed, err)
	}
	defer h.Close()
	_, getErr := h.Store.Get(ctx, ns, "diet")
	putErr := h.Store.Put(ctx, ns, "new", map[string]any{"text": "written in plaintext"})
	return fmt.Errorf("%w: Open without the key of the stored memories succeeded (want vault.ErrKeyNotLoaded); then Get of a sealed memory: %.200v; Put of a new one: %v",
		ErrCheckFailed, getErr, putErr)
}
