package jsonvalue

import (
	"strings"
	"testing"
)

// BenchmarkAppendStringSized compares the two ways a caller that must not
// let a string outgrow its buffer appends one with less room than the
// worst case (six bytes a byte): counting it first (StringLen, then
// AppendString: two scans), and AppendStringWithin (one).
func BenchmarkAppendStringSized(b *testing.B) {
	s := strings.Repeat("message 12 says hello; ", 8) // 184 plain bytes
	buf := make([]byte, 0, 2*len(s))
	b.Run("StringLen+AppendString", func(b *testing.B) {
		for b.Loop() {
			if cap(buf) < StringLen(s) {
				b.Fatal("no room")
			}
			buf = AppendString(buf[:0], s)
		}
	})
	b.Run("AppendStringWithin", func(b *testing.B) {
		for b.Loop() {
			var ok bool
			if buf, ok = AppendStringWithin(buf[:0], s); !ok {
				b.Fatal("no room")
			}
		}
	})
}
