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
	readmetest.NoPlaintextPostgres(t, dsn, "parcel 1187", "my parcel 1187")
}

// TestREADMESnippetVectorsOnlyWhereListed: README's adk section lists the
// plaintext parts; among vectors it names only the memories' vectors. After the snippet
// runs, store_vectors holds vectors of items under "adk.desk.memory." only.
func TestREADMESnippetVectorsOnlyWhereListed(t *testing.T) {
	dsn := readmetest.EnvPostgres(t)
	runREADMESnippet(t)
	readmetest.VectorsOnlyUnderPostgres(t, dsn, "adk.desk.memory.", "the memories' vectors")
}
