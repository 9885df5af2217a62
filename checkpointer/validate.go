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

// ValidateVersion is the one rule for a channel version that Put (in
// channel_versions, new versions and versions_seen) and a thread file's
// import both apply: it must not be empty — LangGraph never stores one, ""
// meaning "no version yet" to NextVersion — (ErrInvalidVersion), and must
// be valid text (ValidateText, ErrInvalidID). Beyond that a version is
// opaque: LangGraph's "<digits>.<fraction>" strings, JS LangGraph's
// integers and any other text a writer chose (an adapter's own ids) are
// stored, exported and imported as they are.
func ValidateVersion(what, v string) error {
	if v == "" {
		return fmt.Errorf("%w: %s is empty", ErrInvalidVersion, what)
	}
	return ValidateText(what, v)
}
