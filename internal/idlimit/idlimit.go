package idlimit

import (
	"fmt"
	"strconv"
)

// MaxBytes is the longest identifier, in bytes of UTF-8 (a multi-byte
// character counts as its bytes, not as one).
const MaxBytes = 512

// Name names an identifier in an error or a message, what saying which
// kind it is: Go-quoted (so that control bytes cannot forge output) when
// it is at most MaxBytes, else by its length alone — a 64 KiB id read
// from a row, a file or an argument must not come back as a 64 KiB line.
func Name(what, id string) string {
	if len(id) > MaxBytes {
		return fmt.Sprintf("%s of %d bytes (longer than the %d-byte limit of identifiers; not shown)", what, len(id), MaxBytes)
	}
	return what + " " + strconv.Quote(id)
}
