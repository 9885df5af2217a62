package idlimit

import (
	"fmt"
	"strconv"
)

// MaxBytes is the longest identifier, in bytes of UTF-8 (a multi-byte
// character counts as its bytes, not as one).
const MaxBytes = 512

// MaxQuotedBytes is the longest quoted form Name shows: that of a
// MaxBytes-byte identifier of printable characters, with its two quotes.
// Quoting escapes a control or invalid byte as four bytes (\x00), so an
// identifier within MaxBytes can quote to about four times its length;
// Name measures the quoted form, not the identifier.
const MaxQuotedBytes = MaxBytes + 2

// Name names an identifier in an error or a message, what saying which
// kind it is: Go-quoted (so that control bytes cannot forge output) when
// the quoted form is at most MaxQuotedBytes, else by its length alone — a
// 64 KiB id read from a row, a file or an argument must not come back as a
// 64 KiB line, nor 512 control bytes as a 2 KiB one. The result is never
// longer than len(what) plus MaxQuotedBytes plus one byte.
func Name(what, id string) string {
	if len(id) > MaxBytes {
		return fmt.Sprintf("%s of %d bytes (longer than the %d-byte limit of identifiers; not shown)", what, len(id), MaxBytes)
	}
	if q := strconv.Quote(id); len(q) <= MaxQuotedBytes {
		return what + " " + q
	}
	return fmt.Sprintf("%s of %d bytes (quoted it would exceed %d bytes: control or invalid bytes; not shown)", what, len(id), MaxQuotedBytes)
}
