package store

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/memvault/memvault/internal/idlimit"
)

// MaxIDBytes is the longest identifier every backend stores, in bytes of
// UTF-8: an item key, a whole namespace (its labels joined with '.', as
// stored — so every label too) and an index field path. It is one limit
// for every backend (the checkpointer's MaxIDBytes is the same number),
// small enough that PostgreSQL's (prefix, key, field_name) index holds one
// of each in a btree entry, and that one fits the key of any other
// database, so that an item written on one backend can move to any other.
const MaxIDBytes = idlimit.MaxBytes

// TooLongError is an identifier longer than MaxIDBytes: it matches
// ErrIDTooLong and Kind (ErrInvalidNamespace, ErrInvalidKey or
// ErrInvalidPath), and names the identifier (What) — never quoting it: it
// is long — its length and the limit.
type TooLongError struct {
	Kind  error  // the sentinel of the identifier's kind
	What  string // which identifier: "namespace", "key", "after key", …
	Bytes int    // its length in bytes
}

func (e *TooLongError) Error() string {
	return fmt.Sprintf("%v: %v: %s is %d bytes, over the limit of %d bytes (store.MaxIDBytes)", e.Kind, ErrIDTooLong, e.What, e.Bytes, MaxIDBytes)
}

// Unwrap gives both sentinels to errors.Is.
func (e *TooLongError) Unwrap() []error { return []error{e.Kind, ErrIDTooLong} }

// CheckLength refuses s, an identifier of kind (ErrInvalidNamespace,
// ErrInvalidKey, ErrInvalidPath) named what, when it is longer than
// MaxIDBytes, with a *TooLongError.
func CheckLength(kind error, what, s string) error {
	if len(s) > MaxIDBytes {
		return &TooLongError{Kind: kind, What: what, Bytes: len(s)}
	}
	return nil
}

// Sentinel errors.
var (
	// ErrInvalidNamespace: a namespace is empty, has an empty label, a label
	// containing '.' or a NUL byte or invalid UTF-8, or starts with the
	// reserved label "langgraph".
	ErrInvalidNamespace = errors.New("store: invalid namespace")
	// ErrInvalidKey: an empty key, or one holding a NUL byte or invalid
	// UTF-8.
	ErrInvalidKey = errors.New("store: invalid key")
	// ErrInvalidFilter: a filter with an unknown operator or a value that
	// cannot be compared.
	ErrInvalidFilter = errors.New("store: invalid filter")
	// ErrInvalidArgument: a negative limit or offset, or another bad option.
	ErrInvalidArgument = errors.New("store: invalid argument")
	// ErrInvalidPath: a field path that does not parse.
	ErrInvalidPath = errors.New("store: invalid field path")
	// ErrNoIndex: an index-only feature was used on a store without one.
	ErrNoIndex = errors.New("store: no index configured")
	// ErrNoTTL: a TTL was given to a store configured without TTLConfig
	// (LangGraph raises NotImplementedError there).
	ErrNoTTL = errors.New("store: no TTL configured")
	// ErrIDTooLong: a namespace (its labels joined with '.'), key or index
	// field path longer than MaxIDBytes. Every backend refuses it alike,
	// before any I/O, in writes and reads (a read could find nothing
	// anyway); the error is a *TooLongError, which also matches
	// ErrInvalidNamespace, ErrInvalidKey or ErrInvalidPath.
	ErrIDTooLong = errors.New("store: identifier too long")
	// ErrClosed: the store was closed.
	ErrClosed = errors.New("store: closed")
)

// Namespace is a hierarchical path of labels, like ("users", "u1",
// "memories"). Stored as its labels joined with '.'.
type Namespace []string

// Validate checks the namespace of a write: at least one label, every label
// valid (see ValidatePrefix), and the first label not "langgraph".
func (ns Namespace) Validate() error {
	if len(ns) == 0 {
		return fmt.Errorf("%w: empty namespace", ErrInvalidNamespace)
	}
	if err := ns.ValidatePrefix(); err != nil {
		return err
	}
	if ns[0] == "langgraph" {
		return fmt.Errorf("%w: the root label %q is reserved", ErrInvalidNamespace, ns[0])
	}
	return nil
}

// ValidatePrefix checks a namespace used as a search prefix or match
// condition: it may be empty, but no label may be empty, contain '.', hold a
// NUL byte or be invalid UTF-8, and the whole, its labels joined with '.',
// may not be longer than MaxIDBytes (ErrIDTooLong). The last three are
// refused on every backend alike (PostgreSQL cannot store the first two in
// text, nor index a too-long one), so that what one backend accepts every
// other can hold too.
func (ns Namespace) ValidatePrefix() error {
	n := len(ns) - 1 // the '.' separators
	for _, l := range ns {
		n += len(l)
	}
	if n > MaxIDBytes {
		return &TooLongError{Kind: ErrInvalidNamespace, What: fmt.Sprintf("namespace of %d labels (joined with '.')", len(ns)), Bytes: n}
	}
	for i, l := range ns {
		if l == "" {
			return fmt.Errorf("%w: label %d is empty", ErrInvalidNamespace, i)
		}
		if strings.Contains(l, ".") {
			return fmt.Errorf("%w: label %q contains '.'", ErrInvalidNamespace, l)
		}
		if err := checkText(l); err != nil {
			return fmt.Errorf("%w: label %d %s", ErrInvalidNamespace, i, err)
		}
	}
	return nil
}

// checkText refuses what PostgreSQL's text type cannot hold: a NUL byte or
// invalid UTF-8. The error quotes nothing of the text, which may be binary.
func checkText(s string) error {
	if strings.IndexByte(s, 0) >= 0 {
		return errors.New("contains a NUL byte")
	}
	if !utf8.ValidString(s) {
		return errors.New("is not valid UTF-8")
	}
	return nil
}

// String is the stored form: labels joined with '.'.
func (ns Namespace) String() string { return strings.Join(ns, ".") }

// ParseNamespace splits a stored namespace.
func ParseNamespace(s string) Namespace {
	if s == "" {
		return Namespace{}
	}
	return Namespace(strings.Split(s, "."))
}

// HasPrefix reports whether ns starts with prefix, label by label (so
// ("a","b") is not under ("a","bc")... and ("a","bc") is not under ("a","b")).
func (ns Namespace) HasPrefix(prefix Namespace) bool {
	if len(prefix) > len(ns) {
		return false
	}
	for i, l := range prefix {
		if ns[i] != l {
			return false
		}
	}
	return true
}

// Equal reports whether two namespaces have the same labels.
func (ns Namespace) Equal(o Namespace) bool {
	return len(ns) == len(o) && ns.HasPrefix(o)
}

// Clone returns a copy that shares no memory with ns.
func (ns Namespace) Clone() Namespace {
	if ns == nil {
		return nil
	}
	return append(Namespace(nil), ns...)
}

// ValidateKey checks an item key: non-empty, valid UTF-8, no NUL byte, at
// most MaxIDBytes bytes (ErrIDTooLong).
func ValidateKey(key string) error {
	if key == "" {
		return fmt.Errorf("%w: empty key", ErrInvalidKey)
	}
	if err := CheckLength(ErrInvalidKey, "key", key); err != nil {
		return err
	}
	if err := checkText(key); err != nil {
		return fmt.Errorf("%w: key %s", ErrInvalidKey, err)
	}
	return nil
}
