package serde

import (
	"fmt"
	"unicode/utf8"
)

// checkText refuses a string that is not valid UTF-8. Neither format can
// carry one: JSON text is UTF-8 (the bytes would have to be replaced by
// U+FFFD, silently changing the value), and LangGraph's msgpack readers
// (ormsgpack) decode every str as UTF-8 and fail on the row. Raw bytes
// belong in a []byte, which both formats keep exactly. The error says
// where the bad byte is, never what the string holds: values are user data
// and errors end up in logs.
func checkText(what, s string) error {
	if utf8.ValidString(s) {
		return nil
	}
	return fmt.Errorf("%w: %s of %d bytes is not valid UTF-8 (first bad byte at %d; use []byte for binary data)", ErrUnsupportedValue, what, len(s), firstInvalidUTF8(s))
}

// firstInvalidUTF8 is the offset of the first byte of s that is not part
// of a valid UTF-8 sequence, or -1.
func firstInvalidUTF8(s string) int {
	for i, r := range s {
		if r == utf8.RuneError {
			if _, size := utf8.DecodeRuneInString(s[i:]); size <= 1 {
				return i
			}
		}
	}
	return -1
}
