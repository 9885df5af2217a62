package vault

import (
	"testing"

	"github.com/memvault/memvault/audit"
	"github.com/memvault/memvault/config"
)

// TestAuditedPlaintextOpens: an audit trail over values written in
// plaintext on purpose (MEMVAULT_ENCRYPTION=off with LANGGRAPH_AES_KEY
// set, which the trail is chained under) opened with a nil keyring and
// panicked in Open (found by session 33's attack review). Its records are
// chained under the configured key and verify, on SQLite and PostgreSQL,
// and name no sealing key: none sealed the values.
func TestAuditedPlaintextOpens(t *testing.T) {
	for name, mk := range auditedConfigs(t) {
		t.Run(name, func(t *testing.T) {
			c, _ := mk(t)
			c.Encryption = config.EncryptionOff
			use(t, c)
			n, err := verifyWith(t, c)
			if err != nil {
				t.Fatalf("verify: %v", err)
			}
			if n < 3 {
				t.Fatalf("verify: %d records, want at least the 3 operations'", n)
			}
			h, err := Open(t.Context(), c)
			if err != nil {
				t.Fatal(err)
			}
			defer h.Close()
			if err := h.Audit.Records(t.Context(), audit.Filter{}, func(r audit.Record) error {
				if r.KeyID != "" {
					t.Errorf("%s %s recorded under key %q: no key sealed these plaintext values", r.Op, r.Target, r.KeyID)
				}
				return nil
			}); err != nil {
				t.Fatal(err)
			}
		})
	}
}
