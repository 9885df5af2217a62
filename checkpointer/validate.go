package checkpointer

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/memvault/memvault/internal/idlimit"
)

// MaxIDBytes is the longest identifier every backend stores, in bytes of
// UTF-8: a thread id, checkpoint namespace, checkpoint id, task id, task
// path, channel name, node name or channel version. It is one limit for
// every backend (the store's MaxIDBytes is the same number), small enough
// that PostgreSQL's widest index — four identifiers in one btree entry —
// holds four of them, and that one fits the key of any other database, so
// that a thread written on one backend can move to any other.
//
// It bounds what is written (Put, PutWrites, CopyThread's destination, a
// thread file's import: ErrIDTooLong), not what is looked up: reads,
// listings and deletes take a longer id, which finds nothing unless an
// earlier version without the limit stored it (SQLite and memory had
// none) — such a thread can still be read, exported, copied to a
// shorter id, and deleted or erased.
const MaxIDBytes = idlimit.MaxBytes

// MaxMetadataDepth is the deepest nesting of objects and arrays in a
// checkpoint's metadata (the metadata object itself is level 1) that Put
// accepts, on every backend alike: SQLite's JSON functions, which its
// backend uses on metadata, refuse 1000 levels, so deeper metadata stored
// on PostgreSQL could not move to SQLite (a thread file's import would
// stop part-way), and Put on SQLite failed with an SQL error. Deeper
// metadata is refused with ErrInvalidMetadata before anything is written.
const MaxMetadataDepth = 500

// NameID names an identifier a caller gave, in an error message: what
// followed by the id Go-quoted (so that it cannot forge output) when the
// quoted form is at most MaxIDBytes+2 bytes (any id within MaxIDBytes of
// printable characters other than `"` and `\`, which quoting escapes),
// else by its length, never its text: an id of control bytes within the
// limit would quote to four times its length.
// Reads accept longer ids (a thread an earlier version stored must stay
// reachable), so a caller's 64 KiB argument reaches not-found errors,
// which end up in logs.
func NameID(what, id string) string { return idlimit.Name(what, id) }

// idTooLongError is a too-long identifier: it matches ErrIDTooLong and
// ErrInvalidID, and names the identifier (never quoting it: it is long)
// and the limit.
type idTooLongError struct {
	what string
	n    int
}

func (e *idTooLongError) Error() string {
	return fmt.Sprintf("%v: %s is %d bytes, over the limit of %d bytes (checkpointer.MaxIDBytes)", ErrIDTooLong, e.what, e.n, MaxIDBytes)
}

func (e *idTooLongError) Unwrap() []error { return []error{ErrIDTooLong, ErrInvalidID} }

// ValidateID checks an identifier about to be stored and indexed: valid
// text (ValidateText) of at most MaxIDBytes bytes (ErrIDTooLong, which
// matches ErrInvalidID too); what names it in the message. Only writes
// apply it; a lookup checks ValidateText alone, so that a longer id an
// earlier version stored stays reachable.
func ValidateID(what, s string) error {
	if len(s) > MaxIDBytes {
		return &idTooLongError{what: what, n: len(s)}
	}
	return ValidateText(what, s)
}

// ValidateText refuses an identifier PostgreSQL's text type cannot hold —
// one with a NUL byte or invalid UTF-8 — with ErrInvalidID; what names the
// field in the message. The text itself is not quoted: it may be binary.
// It does not bound the length: ValidateID does, for what a write stores;
// reads, listings and deletes, and a run id (kept in metadata only), are
// checked by ValidateText alone.
func ValidateText(what, s string) error {
	if strings.IndexByte(s, 0) >= 0 {
		return fmt.Errorf("%w: %s contains a NUL byte", ErrInvalidID, what)
	}
	if !utf8.ValidString(s) {
		return fmt.Errorf("%w: %s is not valid UTF-8", ErrInvalidID, what)
	}
	return nil
}

// ValidateThreadID checks a thread id given alone to find a thread
// (DeleteThread, Prune, CopyThread's source, an export, …): it must be
// non-empty — an empty id never means "every thread" — and valid text
// (ValidateText). Its length is not bounded: a thread an earlier version
// stored with a longer id must stay reachable, to be read and deleted. A
// thread id about to be written is checked by ValidateStoredThreadID.
func ValidateThreadID(id string) error {
	if id == "" {
		return ErrMissingThreadID
	}
	return ValidateText("thread id", id)
}

// ValidateStoredThreadID checks the thread id of a write (Put, PutWrites,
// CopyThread's destination, a thread file's import): ValidateThreadID,
// and at most MaxIDBytes bytes (ErrIDTooLong).
func ValidateStoredThreadID(id string) error {
	if id == "" {
		return ErrMissingThreadID
	}
	return ValidateID("thread id", id)
}

// ValidateVersion is the one rule for a channel version that Put (in
// channel_versions, new versions and versions_seen) and a thread file's
// import both apply: it must not be empty — LangGraph never stores one, ""
// meaning "no version yet" to NextVersion — (ErrInvalidVersion), and must
// be a valid identifier (ValidateID: ErrInvalidID, ErrIDTooLong): it is
// part of PostgreSQL's checkpoint_blobs key. Beyond that a version is
// opaque: LangGraph's "<digits>.<fraction>" strings, JS LangGraph's
// integers and any other text a writer chose (an adapter's own ids) are
// stored, exported and imported as they are.
func ValidateVersion(what, v string) error {
	if v == "" {
		return fmt.Errorf("%w: %s is empty", ErrInvalidVersion, what)
	}
	return ValidateID(what, v)
}
