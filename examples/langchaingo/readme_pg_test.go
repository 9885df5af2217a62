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
	readmetest.NoPlaintextPostgres(t, dsn, "parcel 1187", "five working days")
}

// TestREADMESnippetVectorsOnlyWhereListed: README's langchaingo section lists the
// plaintext parts; among vectors it names only the documents' vectors. After the snippet
// runs, store_vectors holds vectors of items under "langchaingo.docs." only.
func TestREADMESnippetVectorsOnlyWhereListed(t *testing.T) {
	dsn := readmetest.EnvPostgres(t)
	runREADMESnippet(t)
	readmetest.VectorsOnlyUnderPostgres(t, dsn, "langchaingo.docs.", "the documents' vectors")
}
