package mongostore

import (
	"strings"
	"testing"
	"unicode/utf8"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// TestFilterCondSendsOnlyUTF8: the part of a filter pushed into the query
// holds no key or string a BSON string cannot carry exactly (the spec
// requires UTF-8; a server or proxy that checks refuses the query, one
// that repairs the bytes compares U+FFFD). Before, {"k\xff": "v"} and
// {"s": "a\xff"} were sent as is. Such a condition is left to the
// engine's filter, which matches it as the memory store does (no stored
// value holds invalid UTF-8: jsonvalue refuses it on write).
func TestFilterCondSendsOnlyUTF8(t *testing.T) {
	for _, f := range []map[string]any{
		{"k\xff": "v"},
		{"k\xff": map[string]any{"$eq": "v"}},
		{"k\xff": true},
		{"s": "a\xff"},
		{"s": map[string]any{"$eq": "a\xff"}},
		{"s": "a\x00"},
		{"k\x00": "v"},
	} {
		if d := filterCond(f); len(d) != 0 {
			t.Errorf("filter %q: sent %q", f, d)
		}
	}
	// A valid filter beside a hostile one is still sent, and only it.
	d := filterCond(map[string]any{"k": "v", "s": "a\xff", "k\xff": "v"})
	if len(d) != 1 || d[0].Key != fValue+".k" || d[0].Value != "v" {
		t.Errorf("mixed filter: sent %q, want only value.k = v", d)
	}
	for _, e := range d {
		checkUTF8(t, e)
	}
}

func checkUTF8(t *testing.T, e bson.E) {
	t.Helper()
	if !utf8.ValidString(e.Key) || strings.IndexByte(e.Key, 0) >= 0 {
		t.Errorf("key %q sent", e.Key)
	}
	if s, ok := e.Value.(string); ok && (!utf8.ValidString(s) || strings.IndexByte(s, 0) >= 0) {
		t.Errorf("operand %q sent", s)
	}
}
