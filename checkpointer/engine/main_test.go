package engine_test

import (
	"testing"

	"github.com/memvault/memvault/memvaulttest/pgtest"
)

// TestMain starts the throwaway PostgreSQL cluster of the PostgreSQL
// cases.
func TestMain(m *testing.M) { pgtest.Main(m) }
