package labels_test

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/memvault/memvault/adapters/internal/labels"
	"github.com/memvault/memvault/store"
)

func Example() {
	l := labels.Escape("carol.smith%1")
	back, _ := labels.Unescape(l)
	fmt.Println(l, back)
	// Output: carol%2Esmith%251 carol.smith%1
}

// FuzzRoundTrip: every name becomes a valid label that gives the name back,
// and a label only Unescape's inverse could make is refused, not misread.
func FuzzRoundTrip(f *testing.F) {
	for _, s := range []string{"", "a.b", "%", "%2E", "%25.", "ü.%zz", "\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		l := labels.Escape(name)
		if strings.Contains(l, ".") {
			t.Fatalf("label %q of %q holds a period", l, name)
		}
		back, err := labels.Unescape(l)
		if err != nil || back != name {
			t.Fatalf("Unescape(Escape(%q)) = %q, %v", name, back, err)
		}
		if name != "" && utf8.ValidString(name) && !strings.ContainsRune(name, 0) {
			if err := (store.Namespace{"x", l}).Validate(); err != nil {
				t.Fatalf("label of %q refused by the store: %v", name, err)
			}
		}
		if got, err := labels.Unescape(name); err == nil && labels.Escape(got) != name {
			t.Fatalf("Unescape(%q) = %q, which Escape does not give back", name, got)
		}
	})
}

func TestMalformed(t *testing.T) {
	for _, l := range []string{"%", "%2", "%41", "a%2e", "a.b"} {
		if _, err := labels.Unescape(l); err == nil {
			t.Errorf("Unescape(%q) accepted", l)
		}
	}
}
