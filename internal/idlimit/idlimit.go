package idlimit

import (
	"fmt"
	"strconv"
)

// MaxBytes is the longest identifier, in bytes of UTF-8 (a multi-byte
// character counts as its bytes, not as one).
const MaxBytes = 512

// Name names an identifier a caller gave in an error message: what
// followed by the id Go-quoted (so that it cannot forge output) when it is
// within MaxBytes, else by its length and the limit, never its text. Reads
// accept longer ids (a thread an earlier version stored must stay
// reachable), so a caller's 64 KiB argument reaches not-found errors,
// which end up in logs.
func Name(what, id string) string {
	if len(id) > MaxBytes {
		return fmt.Sprintf("%s of %d bytes (longer than the %d-byte limit of identifiers; not shown)", what, len(id), MaxBytes)
	}
	return what + " " + strconv.Quote(id)
}
