package idlimit

import (
	"slices"
	"strconv"
	"strings"
	"testing"
)

// Name's output is bounded whatever the identifier: over the limit, at
// the limit, and within the limit but made of bytes that quoting expands
// (control bytes, invalid UTF-8) — before, 512 NULs came back as 2050
// bytes of "\x00".
func TestNameBounded(t *testing.T) {
	const what = "thread"
	bound := len(what) + 1 + MaxQuotedBytes
	ids := map[string]string{
		"printable at limit": strings.Repeat("t", MaxBytes),
		"NULs at limit":      strings.Repeat("\x00", MaxBytes),
		"ESCs":               strings.Repeat("\x1b", 200),
		"invalid UTF-8":      strings.Repeat("\xff", MaxBytes),
		"newlines":           strings.Repeat("\n", MaxBytes/2+1),
		"quotes":             strings.Repeat(`"`, 300),
		"over limit":         strings.Repeat("\x00", 64<<10),
	}
	for name, id := range ids {
		got := Name(what, id)
		if len(got) > bound {
			t.Errorf("%s: Name is %d bytes, bound %d", name, len(got), bound)
		}
		if slices.ContainsFunc([]byte{0x00, 0x1b, '\n', 0xff}, func(b byte) bool { return strings.IndexByte(got, b) >= 0 }) {
			t.Errorf("%s: Name shows a raw control or invalid byte: %q", name, got)
		}
		if q := strconv.Quote(id); len(q) > MaxQuotedBytes && !strings.Contains(got, strconv.Itoa(len(id))+" bytes") {
			t.Errorf("%s: Name does not give the length: %q", name, got)
		}
	}
}

// What quotes within the bound is still quoted, so that it can be read:
// a printable id at the limit, and a short id with control bytes.
func TestNameQuotesWithinBound(t *testing.T) {
	for _, id := range []string{strings.Repeat("é", MaxBytes/2), "a\nb\x00", strings.Repeat("\x00", (MaxQuotedBytes-2)/4)} {
		if got, want := Name("key", id), "key "+strconv.Quote(id); got != want {
			t.Errorf("Name(%q) = %q, want %q", id, got, want)
		}
	}
}
