package jsonvalue

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"
)

// appendStringByByte is AppendString as it was before it skipped plain
// text a word at a time: the bytes it writes are stored (metadata,
// values), hashed and read by Python and JS, so they must not change.
func appendStringByByte(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xf])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// TestAppendStringWordAtATime: every byte value at every offset of runs
// of plain text around the 8-byte words AppendString skips, then random
// strings dense in escapes, multi-byte runes, U+2028 and bad bytes, give
// the bytes the byte-at-a-time loop gave, StringLen their length, and
// AppendStringWithin them exactly when they fit (checkWithin).
func TestAppendStringWordAtATime(t *testing.T) {
	check := func(s string) {
		t.Helper()
		if got, want := AppendString(nil, s), appendStringByByte(nil, s); !bytes.Equal(got, want) {
			t.Fatalf("AppendString(%q) = %s, want %s", s, got, want)
		}
		if got, want := StringLen(s), len(appendStringByByte(nil, s)); got != want {
			t.Fatalf("StringLen(%q) = %d, want %d", s, got, want)
		}
		checkWithin(t, s, appendStringByByte(nil, s))
	}
	for n := range 20 {
		for at := range n {
			for c := range 256 {
				b := []byte(strings.Repeat("x", n))
				b[at] = byte(c)
				check(string(b))
			}
		}
	}
	pieces := []string{"a", "plain text ", `"`, `\`, "\x00", "\x1f", " ", "\x7f", "\n", "é", "日本", "\u2028", "\u2029",
		"\xff", "\xe2\x80", "\xc3", "🙂", "~", "!"}
	r := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		var sb strings.Builder
		for range r.IntN(24) {
			sb.WriteString(pieces[r.IntN(len(pieces))])
		}
		check(sb.String())
	}
}

// FuzzAppendString: any string encodes as the byte-at-a-time loop
// encoded it.
func FuzzAppendString(f *testing.F) {
	f.Add("The quick brown fox jumps over the lazy dog.")
	f.Add("tab\there \"quoted\" back\\slash é \u2028 \xff")
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := AppendString([]byte("x"), s), appendStringByByte([]byte("x"), s); !bytes.Equal(got, want) {
			t.Fatalf("AppendString(%q) = %s, want %s", s, got, want)
		}
		if got, want := StringLen(s), len(appendStringByByte(nil, s)); got != want {
			t.Fatalf("StringLen(%q) = %d, want %d", s, got, want)
		}
	})
}

// checkWithin checks AppendStringWithin(b, s) for b with room for one
// byte less than want (the encoding, quotes included), exactly want, and
// six times s's length: it appends want, in b's array, exactly when it
// fits, and otherwise returns b and writes nothing past its length.
func checkWithin(t *testing.T, s string, want []byte) {
	t.Helper()
	for _, room := range []int{len(want) - 1, len(want), 6*len(s) + 2} {
		arr := bytes.Repeat([]byte{'#'}, 3+room)
		b := arr[:3:len(arr)]
		got, ok := AppendStringWithin(b, s)
		if fits := room >= len(want); ok != fits {
			t.Fatalf("AppendStringWithin(%q) with room for %d of %d bytes: %v", s, room, len(want), ok)
		}
		if &got[:1][0] != &arr[0] {
			t.Fatalf("AppendStringWithin(%q) with room for %d: the buffer grew", s, room)
		}
		if !ok {
			if len(got) != 3 || !bytes.Equal(arr, bytes.Repeat([]byte{'#'}, len(arr))) {
				t.Fatalf("AppendStringWithin(%q) with room for %d of %d bytes: wrote %q", s, room, len(want), arr)
			}
			continue
		}
		if !bytes.Equal(got[3:], want) {
			t.Fatalf("AppendStringWithin(%q) = %s, want %s", s, got[3:], want)
		}
	}
}
