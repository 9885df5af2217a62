package vault_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memvault/memvault/memvaulttest/pgtest"
	"github.com/memvault/memvault/memvaulttest/readmetest"
	"github.com/memvault/memvault/vault/vaulttest"
)

// TestCarelessWhatIsEncrypted walks README's "What is encrypted, and what
// is not" on SQLite and PostgreSQL (vaulttest.WhatIsEncrypted; MongoDB and
// Redis run it in their modules): the raw database — the SQLite files'
// bytes; every PostgreSQL table of the schema as text, bytea columns as
// their bytes — must hold every plaintext marker and no secret.
func TestCarelessWhatIsEncrypted(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) {
		dir := t.TempDir()
		vaulttest.WhatIsEncrypted(t, map[string]string{"MEMVAULT_DB": filepath.Join(dir, "agent.db")}, func(t *testing.T) string {
			entries, err := os.ReadDir(dir)
			if err != nil {
				t.Fatal(err)
			}
			var raw strings.Builder
			for _, e := range entries {
				b, err := os.ReadFile(filepath.Join(dir, e.Name()))
				if err != nil {
					t.Fatal(err)
				}
				raw.Write(b)
			}
			return raw.String()
		})
	})
	t.Run("postgres", func(t *testing.T) {
		dsn := pgtest.SchemaDSN(t)
		vaulttest.WhatIsEncrypted(t, map[string]string{"MEMVAULT_DSN": dsn}, func(t *testing.T) string {
			var raw strings.Builder
			for tb, rows := range readmetest.DumpPostgres(t, dsn) {
				raw.WriteString(tb + ": " + rows + "\n")
			}
			return raw.String()
		})
	})
}
