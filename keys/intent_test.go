package keys_test

import (
	"bytes"
	"path/filepath"
	"strings"
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
	v := h.SignIntent("table-1", 7, "carol", "1700000000000000")
	if s, prior, ok := h.OpenIntent("table-1", 7, v); !ok || s != "carol" || prior != "1700000000000000" {
		t.Fatalf("OpenIntent of its own intent = %q, %q, %v", s, prior, ok)
	}
	fresh := h.SignIntent("table-1", 8, "a:b", "")
	if s, prior, ok := h.OpenIntent("table-1", 8, fresh); !ok || s != "a:b" || prior != "" {
		t.Fatalf("OpenIntent of an intent with no prior record and ':' in the subject = %q, %q, %v", s, prior, ok)
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
		"prior edited":              {"table-1", 7, strings.Replace(v, ":1700000000000000:", ":1700000000000001:", 1)},
		"prior dropped":             {"table-1", 7, strings.Replace(v, ":1700000000000000:", "::", 1)},
		"empty subject":             {"table-1", 7, v[:len(v)-len("carol")]},
		"empty":                     {"table-1", 7, ""},
		"no subject part":           {"table-1", 7, "v3:" + v[3:67]},
		"session 24's v2 form":      {"table-1", 7, "v2:" + v[3:67] + ":carol"},
	} {
		if s, _, ok := h.OpenIntent(tc.table, tc.n, tc.value); ok {
			t.Errorf("%s: OpenIntent accepted %q as subject %q", name, tc.value, s)
		}
	}
	if s, _, ok := other.OpenIntent("table-1", 7, v); ok {
		t.Fatalf("a hierarchy of another master key opened the intent (subject %q)", s)
	}
}
