package keys

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Subjects says whose data a value is, from where it lives. The zero value
// assigns no subject: every value is sealed under the master key.
type Subjects struct {
	// ThreadSeparator, when set, makes the part of a thread id before its
	// first ThreadSeparator the thread's subject: with ":", thread
	// "carol:chat-1" is Carol's. A thread id without it has no subject.
	ThreadSeparator string
	// ThreadMetadataKey, when set (and ThreadSeparator is not), makes the
	// value of this key in a thread's checkpoint metadata — such as
	// "user_id" — the thread's subject. The first checkpoint that names one
	// binds the thread to it in the key table (a keys.ThreadTable), so its
	// pending writes and reads, which carry no metadata, find it; a later
	// checkpoint naming another subject is refused. A thread never bound
	// has no subject.
	ThreadMetadataKey string
	// NamespacePrefix, when set, makes the label after it a store item's
	// subject: with {"users"}, items under ("users", "carol", …) are
	// Carol's. Items elsewhere have no subject.
	NamespacePrefix []string
}

// ThreadSubject returns the subject of thread id ("" for none).
func (s Subjects) ThreadSubject(id string) string {
	if s.ThreadSeparator == "" {
		return ""
	}
	sub, _, ok := strings.Cut(id, s.ThreadSeparator)
	if !ok {
		return ""
	}
	return sub
}

// NamespaceSubject returns the subject of a store namespace given as its
// dotted text, as stored ("" for none).
func (s Subjects) NamespaceSubject(ns string) string {
	if len(s.NamespacePrefix) == 0 {
		return ""
	}
	labels := strings.Split(ns, ".")
	if len(labels) <= len(s.NamespacePrefix) {
		return ""
	}
	for i, l := range s.NamespacePrefix {
		if labels[i] != l {
			return ""
		}
	}
	return labels[len(s.NamespacePrefix)]
}

// ThreadPrefix returns the prefix every thread id of subject starts with
// ("" when threads have no subjects).
func (s Subjects) ThreadPrefix(subject string) string {
	if s.ThreadSeparator == "" {
		return ""
	}
	return subject + s.ThreadSeparator
}

// Namespace returns the store namespace prefix holding subject's items
// (nil when items have no subjects).
func (s Subjects) Namespace(subject string) []string {
	if len(s.NamespacePrefix) == 0 {
		return nil
	}
	return append(append([]string(nil), s.NamespacePrefix...), subject)
}

// maxSubjectLen bounds a subject's length in bytes.
const maxSubjectLen = 256

// CheckSubject refuses a subject that cannot name one: empty, longer than
// 256 bytes, not UTF-8, holding a NUL, or starting with "memvault:thread:"
// (the key table's name for an unbound thread's own keys).
func (s Subjects) CheckSubject(subject string) error {
	switch {
	case strings.HasPrefix(subject, threadKeyPrefix):
		return fmt.Errorf("keys: subject %q: the prefix %q is reserved", subject, threadKeyPrefix)
	case subject == "":
		return fmt.Errorf("keys: empty subject")
	case len(subject) > maxSubjectLen:
		return fmt.Errorf("keys: subject of %d bytes (at most %d)", len(subject), maxSubjectLen)
	case !utf8.ValidString(subject) || strings.ContainsRune(subject, 0):
		return fmt.Errorf("keys: subject %q is not NUL-free UTF-8", subject)
	}
	return nil
}
