package mongovault_test

import (
	"strings"
	"testing"

	"github.com/memvault/memvault/backends/mongodb/mongovault"
	"github.com/memvault/memvault/config"
)

// TestReviewS27bDatabaseNameUnixAccepts: MongoDB on Unix and Linux
// refuses only / \ . space " $ and NUL in a database name (the manual's
// "Restrictions on Database Names for Unix and Linux Systems"); * < > : |
// ? are refused on Windows servers only. 1a33391 refuses the Windows set
// everywhere, so a deployment whose database is "agents:prod" on a Linux
// server, which opened before, is now refused before any round trip. A
// name of 63 bytes (multi-byte runes included) and '-' stay accepted.
// Before the fix: 'Database(schema "agents:prod"): mongovault:
// MEMVAULT_SCHEMA: database name "agents:prod" holds ":", which MongoDB
// refuses in a database name'.
func TestReviewS27bDatabaseNameUnixAccepts(t *testing.T) {
	for _, name := range []string{"agents:prod", "a*b", "a<b>", "a|b", "what?", "memvault-prod", "agénts", strings.Repeat("é", 31) + "x"} {
		got, err := mongovault.Database(config.Config{DSN: "mongodb://h:27017/", Schema: name})
		if err != nil || got != name {
			t.Errorf("Database(schema %q) = %q, %v; want it as it is (a Linux MongoDB accepts it)", name, got, err)
		}
	}
}
