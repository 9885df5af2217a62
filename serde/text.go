package serde

import (
	"bytes"
	"encoding/json"
	"fmt"
	"unicode/utf8"

	"github.com/memvault/memvault/jsonvalue"
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

// checkNumbers refuses compact, valid JSON text holding a number with a
// fraction or an exponent beyond float64's range: JSONPlus would write it as
// is and read it back as ±Inf, a different value, so it is refused before
// anything is stored, as a json.Number value is. Integers of any size read
// back as themselves (int64, uint64, *big.Int). The error gives the
// number's length, never its digits.
func checkNumbers(what string, b []byte) error {
	for i := 0; i < len(b); i++ {
		switch c := b[i]; {
		case c == '"':
			// Skip the string (json.Compact left it valid): to the next
			// quote that an even run of backslashes precedes.
			for {
				j := bytes.IndexByte(b[i+1:], '"')
				if j < 0 {
					return nil
				}
				i += 1 + j
				n := 0
				for k := i - 1; b[k] == '\\'; k-- {
					n++
				}
				if n%2 == 0 {
					break
				}
			}
		case c == '-' || (c >= '0' && c <= '9'):
			start, float := i, false
			for ; i < len(b) && isNumberByte(b[i]); i++ {
				float = float || b[i] == '.' || b[i] == 'e' || b[i] == 'E'
			}
			// Integers of any size read back as themselves; the rule
			// for the rest is jsonvalue.Number's, a json.Number's.
			if float {
				if _, err := jsonvalue.Number(json.Number(b[start:i])); err != nil {
					return fmt.Errorf("%w: %s holds a number of %d bytes beyond float64", ErrUnsupportedValue, what, i-start)
				}
			}
			i--
		}
	}
	return nil
}

func isNumberByte(c byte) bool {
	return c >= '0' && c <= '9' || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-'
}
