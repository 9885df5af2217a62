package keys_test

import (
	"testing"

	"github.com/memvault/memvault/keys"
)

// TestParseMarkCount: only the spelling the marks' writers use is a
// count; every other one refuses the subject's writes (ErasedPastMark).
func TestParseMarkCount(t *testing.T) {
	for v, want := range map[string]int64{"0": 0, "1": 1, "42": 42, "999999999999999999": 999999999999999999} {
		if n, ok := keys.ParseMarkCount(v); !ok || n != want {
			t.Errorf("ParseMarkCount(%q) = %d, %v; want %d, true", v, n, ok, want)
		}
		if keys.ErasedPastMark(v, want) || !keys.ErasedPastMark(v, want-1) {
			t.Errorf("ErasedPastMark(%q) does not compare with the count it spells", v)
		}
	}
	for _, v := range []string{"", "one", "1.0", "+1", " 1", "1 ", "01", "-1", "1e3", "9999999999999999999", "99999999999999999999", "1\x00"} {
		if n, ok := keys.ParseMarkCount(v); ok {
			t.Errorf("ParseMarkCount(%q) = %d, true; want not a count", v, n)
		}
		if !keys.ErasedPastMark(v, 1<<62) {
			t.Errorf("ErasedPastMark(%q, huge) = false: a mark that is not a count must refuse", v)
		}
	}
}
