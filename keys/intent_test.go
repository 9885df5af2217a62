package keys_test

import (
	"bytes"
	"path/filepath"
	"testing"

	"github.com/memvault/memvault/crypto"
	"github.com/memvault/memvault/keys"
	"github.com/memvault/memvault/keys/memkeys"
	"github.com/memvault/memvault/serde"
)

// TestIntentAuthenticated: an erasure intent opens only as SignIntent made
// it — same table, same number, same subject, a master key of the
// Hierarchy's — so a row written by someone with access to the data
// database alone is never acted on.
func TestIntentAuthenticated(t *testing.T) {
	h := hierarchy(t, filepath.Join(t.TempDir(), "keys.db"))
	otherKey, err := crypto.NewKey(bytes.Repeat([]byte{9}, 32))
	must(t, err)
	otherRing, err := crypto.NewKeyring(otherKey)
	must(t, err)
	otherMaster, err := serde.NewEncrypted(nil, otherRing)
	must(t, err)
	other, err := keys.New(keys.Options{Master: otherMaster, Table: memkeys.New(), Subjects: subjects})
	must(t, err)
	v := h.SignIntent("table-1", 7, "carol")
	if s, ok := h.OpenIntent("table-1", 7, v); !ok || s != "carol" {
		t.Fatalf("OpenIntent of its own intent = %q, %v", s, ok)
	}
	for name, tc := range map[string]struct {
		table string
		n     int64
		value string
	}{
		"bare subject (session 23)": {"table-1", 7, "carol"},
		"another number":            {"table-1", 8, v},
		"another table":             {"table-2", 7, v},
		"subject edited":            {"table-1", 7, v[:len(v)-len("carol")] + "dave"},
		"empty subject":             {"table-1", 7, v[:len(v)-len("carol")]},
		"empty":                     {"table-1", 7, ""},
		"no subject part":           {"table-1", 7, "v2:" + v[3:67]},
	} {
		if s, ok := h.OpenIntent(tc.table, tc.n, tc.value); ok {
			t.Errorf("%s: OpenIntent accepted %q as subject %q", name, tc.value, s)
		}
	}
	if s, ok := other.OpenIntent("table-1", 7, v); ok {
		t.Fatalf("a hierarchy of another master key opened the intent (subject %q)", s)
	}
}
