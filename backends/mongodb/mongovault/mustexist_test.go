package mongovault_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memvault/memvault/backends/mongodb/mongotest"
	"github.com/memvault/memvault/config"
	"github.com/memvault/memvault/vault"
)

// TestMustExistRefusesMistypedTables: a MongoDB database set up with its
// key table and audit trail in SQLite files, opened again with MustExist
// (what the CLI's operator commands do) and one of the two paths
// mistyped: Open fails with ErrNotFound naming the variable, and the
// mistyped file is not created (before: an empty key table or trail was
// created there, and the operator's command ran on it).
func TestMustExistRefusesMistypedTables(t *testing.T) {
	dir := t.TempDir()
	env := subjectEnv(t, mongotest.Database(t).Name(), "MEMVAULT_KEY_TABLE", filepath.Join(dir, "keys.db"), "MEMVAULT_AUDIT", "true", "MEMVAULT_AUDIT_TABLE", filepath.Join(dir, "audit.db"))
	h, err := openEnv(t, env)
	if err != nil {
		t.Fatalf("first Open: %v", err)
	}
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"MEMVAULT_KEY_TABLE", "MEMVAULT_AUDIT_TABLE"} {
		t.Run(name, func(t *testing.T) {
			typo := filepath.Join(dir, "typo-"+strings.ToLower(name)+".db")
			c, err := config.FromLookup(func(k string) (string, bool) {
				if k == name {
					return typo, true
				}
				v, ok := env[k]
				return v, ok
			})
			if err != nil {
				t.Fatal(err)
			}
			c.MustExist = true
			h, err := vault.Open(t.Context(), c)
			if err == nil {
				_ = h.Close()
			}
			if !errors.Is(err, vault.ErrNotFound) || !strings.Contains(err.Error(), name) {
				t.Errorf("Open with MustExist and %s mistyped: %v; want ErrNotFound naming it", name, err)
			}
			if _, err := os.Stat(typo); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("the mistyped %s file: stat %v; want it never created", name, err)
			}
		})
	}
	c, err := config.FromLookup(func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	if err != nil {
		t.Fatal(err)
	}
	c.MustExist = true
	h, err = vault.Open(t.Context(), c)
	if err != nil {
		t.Fatalf("Open with MustExist and the right paths: %v", err)
	}
	_ = h.Close()
}
