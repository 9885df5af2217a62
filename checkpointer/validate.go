package checkpointer

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// ValidateText refuses an identifier PostgreSQL's text type cannot hold —
// one with a NUL byte or invalid UTF-8 — with ErrInvalidID; what names the
// field in the message. The text itself is not quoted: it may be binary.
func ValidateText(what, s string) error {
	if strings.IndexByte(s, 0) >= 0 {
		return fmt.Errorf("%w: %s contains a NUL byte", ErrInvalidID, what)
	}
	if !utf8.ValidString(s) {
		return fmt.Errorf("%w: %s is not valid UTF-8", ErrInvalidID, what)
	}
	return nil
}

// ValidateThreadID checks a thread id given alone (DeleteThread, CopyThread,
// Prune, …): it must be non-empty — an empty id never means "every thread" —
// and valid text.
func ValidateThreadID(id string) error {
	if id == "" {
		return ErrMissingThreadID
	}
	return ValidateText("thread id", id)
}
