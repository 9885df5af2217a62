package main

import (
	"testing"

	"github.com/memvault/memvault/memvaulttest/pgtest"
	"github.com/memvault/memvault/memvaulttest/readmetest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// TestREADMESnippetPostgres runs the README's snippet as TestREADMESnippet
// does, but with MEMVAULT_DSN exported instead of MEMVAULT_DB: README's
// adapters section says each adapter "runs on every memvault store
// (SQLite by default, PostgreSQL in production) and is encrypted when the
// store is". Every table of the schema is then read as raw rows.
func TestREADMESnippetPostgres(t *testing.T) {
	dsn := readmetest.EnvPostgres(t)
	runREADMESnippet(t)
	readmetest.NoPlaintextPostgres(t, dsn, "49.90 EUR", "parcel 1187", "prefers email")
}

// TestREADMESnippetVectorsOnlyWhereListed: README's trpcagent section lists the
// plaintext parts; among vectors it names only the memories' vectors. After the snippet
// runs, store_vectors holds vectors of items under "trpc.desk.memories." only.
func TestREADMESnippetVectorsOnlyWhereListed(t *testing.T) {
	dsn := readmetest.EnvPostgres(t)
	runREADMESnippet(t)
	readmetest.VectorsOnlyUnderPostgres(t, dsn, "trpc.desk.memories.", "the memories' vectors")
}
