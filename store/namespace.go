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
//
// It bounds what is written — the namespace and key of Put, PutIf and a
// Batch's put ops (Namespace.ValidateStored, ValidateStoredKey), and the
// index field paths of the store's IndexConfig and of WithIndex — not
// what is looked up: Get, Search, ListNamespaces, ListItems, Delete (a
// put op with a nil value) and DeletePrefix take a longer one, which finds
// nothing unless an earlier version without the limit stored it (SQLite
// and memory had none); such an item can still be read and deleted.
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
// MaxIDBytes, with a *TooLongError. Writes apply it (see MaxIDBytes).
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
	// UTF-8, or a key of a write longer than MaxIDBytes (then it is
	// ErrIDTooLong too).
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
	// ErrIDTooLong: a namespace (its labels joined with '.') or key that a
	// write would store (Put, PutIf, a Batch's put op), or an index field
	// path (IndexConfig.Fields, WithIndex), longer than MaxIDBytes. Every
	// backend refuses it alike, before any I/O; the error is a
	// *TooLongError, which also matches ErrInvalidNamespace, ErrInvalidKey
	// or ErrInvalidPath. Reads, listings, searches and deletes do not
	// bound the length (see MaxIDBytes): a longer namespace or key finds
	// nothing, or an item an earlier version stored without the limit.
	ErrIDTooLong = errors.New("store: identifier too long")
	// ErrClosed: the store was closed.
	ErrClosed = errors.New("store: closed")
)

// Namespace is a hierarchical path of labels, like ("users", "u1",
// "memories"). Stored as its labels joined with '.'.
type Namespace []string

// Validate checks a namespace that names items (Get, Delete, ListItems,
// DeletePrefix, and every write): at least one label, every label valid
// (see ValidatePrefix), and the first label not "langgraph". It does not
// bound the length, so that items an earlier version stored under a
// longer namespace stay reachable; a write checks ValidateStored.
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

// ValidateStored checks the namespace of a write (Put, PutIf, a Batch's
// put op): Validate, and the whole, its labels joined with '.', at most
// MaxIDBytes (ErrIDTooLong), refused on every backend alike (PostgreSQL
// cannot index a longer one), so that what one backend stores every other
// can hold too.
func (ns Namespace) ValidateStored() error {
	n := len(ns) - 1 // the '.' separators
	for _, l := range ns {
		n += len(l)
	}
	if n > MaxIDBytes {
		return &TooLongError{Kind: ErrInvalidNamespace, What: fmt.Sprintf("namespace of %d labels (joined with '.')", len(ns)), Bytes: n}
	}
	return ns.Validate()
}

// ValidatePrefix checks a namespace used as a search prefix or match
// condition: it may be empty, but no label may be empty, contain '.', hold a
// NUL byte or be invalid UTF-8. The last two are refused on every backend
// alike (PostgreSQL cannot store them in text), so that what one backend
// accepts every other can hold too. The length is not bounded: a longer
// prefix finds nothing, or items an earlier version stored without the
// limit (see MaxIDBytes).
func (ns Namespace) ValidatePrefix() error {
	for i, l := range ns {
		if l == "" {
			return fmt.Errorf("%w: label %d is empty", ErrInvalidNamespace, i)
		}
		if strings.Contains(l, ".") {
			// By position and length, never its text: a label is often a
			// caller's value (a user id), of any length.
			return fmt.Errorf("%w: label %d (%d bytes) contains '.', which separates labels", ErrInvalidNamespace, i, len(l))
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

// ValidateKey checks an item key that is looked up (Get, Delete,
// ListItems' After): non-empty, valid UTF-8, no NUL byte. It does not
// bound the length, so that an item an earlier version stored under a
// longer key stays reachable; a write checks ValidateStoredKey.
func ValidateKey(key string) error {
	if key == "" {
		return fmt.Errorf("%w: empty key", ErrInvalidKey)
	}
	if err := checkText(key); err != nil {
		return fmt.Errorf("%w: key %s", ErrInvalidKey, err)
	}
	return nil
}

// ValidateStoredKey checks the key of a write (Put, PutIf, a Batch's put
// op): ValidateKey, and at most MaxIDBytes bytes (ErrIDTooLong).
func ValidateStoredKey(key string) error {
	if key == "" {
		return fmt.Errorf("%w: empty key", ErrInvalidKey)
	}
	if err := CheckLength(ErrInvalidKey, "key", key); err != nil {
		return err
	}
	return ValidateKey(key)
}
