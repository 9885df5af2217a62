package labels_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/memvault/memvault/adapters/shared/labels"
	"github.com/memvault/memvault/store"
)

func Example() {
	l := labels.Escape("carol.smith%1")
	back, _ := labels.Unescape(l)
	fmt.Println(l, back)
	// Output: carol%2Esmith%251 carol.smith%1
}

// FuzzRoundTrip: every name becomes a label that gives the name back, and
// a label only Unescape's inverse could make is refused, not misread. The
// store looks the label up at any length, and stores it exactly when the
// namespace it is in fits store.MaxIDBytes; when escaping makes it too
// long to store (a '.' or '%' grows to three bytes) the store refuses the
// write with the clear error, store.ErrIDTooLong, never anything else.
func FuzzRoundTrip(f *testing.F) {
	for _, s := range []string{"", "a.b", "%", "%2E", "%25.", "ü.%zz", "\x00"} {
		f.Add(s)
	}
	// Around the limit: {"x", label} is 2 bytes more than the label, and
	// each '.' or '%' escapes to 3 bytes.
	fits := store.MaxIDBytes - 2
	f.Add(strings.Repeat("a", fits))
	f.Add(strings.Repeat("a", fits+1))
	f.Add(strings.Repeat("a", fits-3) + ".") // escapes to exactly the limit
	f.Add(strings.Repeat("a", fits-2) + ".") // short enough, escapes one over
	f.Add(strings.Repeat("%", fits/3))       // escapes to the limit
	f.Add(strings.Repeat("é", fits/2) + "%") // multi-byte, escapes over
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
			ns := store.Namespace{"x", l}
			err := ns.ValidateStored() // the limit bounds what is stored
			if verr := ns.Validate(); verr != nil {
				t.Fatalf("label of %q refused as a lookup namespace: %v", name, verr)
			}
			switch tooLong := len(ns.String()) > store.MaxIDBytes; {
			case tooLong && !(errors.Is(err, store.ErrIDTooLong) && errors.Is(err, store.ErrInvalidNamespace)):
				t.Fatalf("label of %q (%d bytes escaped) = %v, want store.ErrIDTooLong", name, len(l), err)
			case !tooLong && err != nil:
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
