package vault

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/memvault/memvault/config"
	"github.com/memvault/memvault/memvaulttest/pgtest"
	"github.com/memvault/memvault/memvaulttest/testkeys"
)

// subjectsConfigOn is s23Config's database on SQLite, or on PostgreSQL
// with the key table and the audit trail (when turned on) in schemas of
// their own.
func subjectsConfigOn(t *testing.T, pg bool) config.Config {
	t.Helper()
	c := s23Config(t.TempDir())
	if pg {
		n := time.Now().UnixNano()
		c.DSN = pgtest.SchemaDSN(t)
		c.KeyTable, c.AuditTable = fmt.Sprintf("keys_kek_%d", n), fmt.Sprintf("audit_kek_%d", n)
	}
	return c
}

// TestWrongMasterKeyWithSubjectsRefused (session 24's closing note): with
// per-subject keys, every stored value of a subject is under the subject's
// data key, whose id no master key has, so the value probe cannot tell a
// wrong LANGGRAPH_AES_KEY, and Open went on: the first write of a new
// subject then wrapped its data key under the wrong key's KEK, mixing two
// KEKs in the key table, and the operator learnt of it only when an old
// subject's read failed. Open now reads the KEK ids the key table's keys
// are wrapped by (one loose index scan) and refuses a table holding keys of
// a KEK no configured provider holds, naming it (an id, never key bytes)
// and what to set. The previous key, a KEK rotation, and the documented
// escape hatch still open.
func TestWrongMasterKeyWithSubjectsRefused(t *testing.T) {
	ctx := context.Background()
	written, other := keyID(t, testkeys.Key), keyID(t, otherKey)
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			c := subjectsConfigOn(t, backend == "postgres")
			h, err := Open(ctx, c)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := putCarolS22(ctx, h, "carol:1", "carol takes insulin"); err != nil {
				t.Fatal(err)
			}
			h.Close()

			wrong := c
			wrong.Keys.Primary = otherKey
			if h, err := Open(ctx, wrong); err == nil {
				_, perr := putCarolS22(ctx, h, "dave:1", "dave's key wrapped under the wrong KEK")
				h.Close()
				t.Fatalf("Open with a wrong master key and per-subject keys: opened (a new subject's write: %v); want ErrKeyNotLoaded", perr)
			} else {
				if !errors.Is(err, ErrKeyNotLoaded) {
					t.Fatalf("Open with a wrong master key: %v, want ErrKeyNotLoaded", err)
				}
				msg := err.Error()
				for _, w := range []string{"env:" + written, "env:" + other, "LANGGRAPH_AES_KEY_PREVIOUS", "rotate-kek"} {
					if !strings.Contains(msg, w) {
						t.Errorf("%q does not say %q", msg, w)
					}
				}
				if strings.Contains(msg, testkeys.Key) || strings.Contains(msg, otherKey) {
					t.Errorf("%q shows a key", msg)
				}
			}

			// The escape hatch (a lost master key: delete what it sealed).
			skip := wrong
			skip.DangerousSkipKeyCheck = true
			if h, err := Open(ctx, skip); err != nil {
				t.Fatalf("DangerousSkipKeyCheck: %v", err)
			} else {
				h.Close()
			}

			// A rotation: the old key as the previous one opens; once
			// RotateKEK re-wrapped every key, the new key alone opens.
			rot := wrong
			rot.Keys.Previous = []string{testkeys.Key}
			h, err = Open(ctx, rot)
			if err != nil {
				t.Fatalf("with the old key as previous: %v", err)
			}
			if _, err := h.RotateKEK(ctx, nil); err != nil {
				h.Close()
				t.Fatal(err)
			}
			h.Close()
			h, err = Open(ctx, wrong)
			if err != nil {
				t.Fatalf("the new key alone after rotate-kek: %v", err)
			}
			got, err := putCarolS22(ctx, h, "carol:1", "carol still reads")
			h.Close()
			if err != nil || got != "carol still reads" {
				t.Fatalf("carol after rotate-kek: %q, %v", got, err)
			}
			// And now the old key alone is the wrong one.
			if h, err := Open(ctx, c); !errors.Is(err, ErrKeyNotLoaded) {
				if h != nil {
					h.Close()
				}
				t.Fatalf("the old key alone after rotate-kek: %v, want ErrKeyNotLoaded", err)
			}
		})
	}
}
