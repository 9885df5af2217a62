package inspector

import (
	"strings"
	"testing"
)

// TestPrintableTextEscapesCheaply: escaping is per rune but allocates per
// string, not per escape (fmt.Fprintf per escape made an 8 MB value of
// bidi characters take seconds and hundreds of megabytes to show).
func TestPrintableTextEscapesCheaply(t *testing.T) {
	s := strings.Repeat("bidi \u202e\x00\xff é\n", 1000)
	want := strings.Repeat(`bidi \u{202e}\u{0000}\xff é`+"\n", 1000)
	if got := printableText(s); got != want {
		t.Fatalf("printableText = %.80q…, want %.80q…", got, want)
	}
	if n := testing.AllocsPerRun(10, func() { printableText(s) }); n > 4 {
		t.Errorf("printableText of 3 000 escapes: %v allocations, want a few, not one per escape", n)
	}
}
