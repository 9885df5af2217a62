package keys

import (
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/memvault/memvault/internal/idlimit"
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
	// Carol's. Items elsewhere have no subject. A label "*" matches any
	// one label: with {"adk", "*", "memory"}, items under ("adk", "desk",
	// "memory", "carol", …) are Carol's, whatever the app. The first label
	// may not be "*" (see Validate).
	NamespacePrefix []string
	// NamespacePrefixes are more prefixes like NamespacePrefix, for data
	// whose subjects live in several layouts: an ADK application keeps a
	// user's sessions under ("adk", app, "sessions", user) and her
	// memories under ("adk", app, "memory", user), so it needs
	// {"adk", "*", "sessions"} and {"adk", "*", "memory"} (and so on: each
	// adapter exports the prefixes of its layout). A namespace's subject is
	// the label after whichever prefix it matches; Validate refuses
	// prefixes that would give one namespace two different subjects.
	NamespacePrefixes [][]string
}

// wildcard is the label of a namespace prefix that matches any one label.
const wildcard = "*"

// Prefixes returns every namespace prefix: NamespacePrefix (when set),
// then NamespacePrefixes.
func (s Subjects) Prefixes() [][]string {
	if len(s.NamespacePrefix) == 0 {
		return s.NamespacePrefixes
	}
	return append([][]string{s.NamespacePrefix}, s.NamespacePrefixes...)
}

// Validate checks the namespace prefixes: each is non-empty, its labels
// are non-empty, NUL-free UTF-8 without "." (they are matched against the
// dotted text of namespaces), and its first label is not "*" — a prefix
// must name where its subjects live, not make the first label of every
// namespace a wildcard, and erasure lists a subject's namespaces under
// that fixed head. Two prefixes of different lengths that one namespace
// could match are refused: they would give it two subjects (prefixes of
// one length that overlap, such as {"adk", "*", "memory"} and {"adk",
// "desk", "memory"}, agree on the subject and are fine).
func (s Subjects) Validate() error {
	ps := s.Prefixes()
	for i, p := range ps {
		if len(p) == 0 {
			return fmt.Errorf("keys: empty namespace prefix")
		}
		for _, l := range p {
			if l == "" || strings.Contains(l, ".") || !utf8.ValidString(l) || strings.ContainsRune(l, 0) {
				return fmt.Errorf("keys: namespace prefix %q: labels must be non-empty NUL-free UTF-8 without '.'", strings.Join(p, "."))
			}
		}
		if p[0] == wildcard {
			return fmt.Errorf("keys: namespace prefix %q starts with %q: name the namespace its subjects live under", strings.Join(p, "."), wildcard)
		}
		for _, q := range ps[:i] {
			if len(p) != len(q) && overlap(p, q) {
				return fmt.Errorf("keys: namespace prefixes %q and %q both match some namespaces, with different subjects", strings.Join(q, "."), strings.Join(p, "."))
			}
		}
	}
	return nil
}

// overlap reports whether some namespace matches both prefixes: they
// agree, label by label, as far as the shorter goes.
func overlap(p, q []string) bool {
	for i := range min(len(p), len(q)) {
		if p[i] != q[i] && p[i] != wildcard && q[i] != wildcard {
			return false
		}
	}
	return true
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

// MetadataSubject returns the subject checkpoint metadata md names under
// ThreadMetadataKey ("" for none: no such key configured, no such entry,
// or not a non-empty string). It checks nothing more: whoever binds a
// thread to it refuses a name that is no subject (CheckSubject).
func (s Subjects) MetadataSubject(md map[string]any) string {
	if s.ThreadMetadataKey == "" {
		return ""
	}
	name, _ := md[s.ThreadMetadataKey].(string)
	return name
}

// NamespaceSubject returns the subject of a store namespace given as its
// dotted text, as stored ("" for none). Stores call it for every value
// they seal or open, so it allocates nothing.
func (s Subjects) NamespaceSubject(ns string) string {
	if sub := prefixSubject(ns, s.NamespacePrefix); sub != "" {
		return sub
	}
	for _, p := range s.NamespacePrefixes {
		if sub := prefixSubject(ns, p); sub != "" {
			return sub
		}
	}
	return ""
}

// prefixSubject returns the label of ns after prefix p ("" when ns does
// not match p or has no label after it).
func prefixSubject(ns string, p []string) string {
	if len(p) == 0 {
		return ""
	}
	rest := ns
	for _, l := range p {
		head, tail, ok := strings.Cut(rest, ".")
		if !ok || (l != wildcard && head != l) {
			return ""
		}
		rest = tail
	}
	sub, _, _ := strings.Cut(rest, ".")
	return sub
}

// ThreadPrefix returns the prefix every thread id of subject starts with
// ("" when threads have no subjects).
func (s Subjects) ThreadPrefix(subject string) string {
	if s.ThreadSeparator == "" {
		return ""
	}
	return subject + s.ThreadSeparator
}

// Namespaces returns, for each namespace prefix, the prefix followed by
// subject: the namespaces holding subject's items where the prefixes have
// no "*", the store.ListNamespacesOptions prefixes that find them where
// they do (nil when items have no subjects). A listed namespace is the
// subject's only if its label after the prefix is subject itself: a "*"
// subject matches every label in a listing.
func (s Subjects) Namespaces(subject string) [][]string {
	var out [][]string
	for _, p := range s.Prefixes() {
		out = append(out, append(slices.Clone(p), subject))
	}
	return out
}

// maxSubjectLen bounds a subject's length in bytes.
const maxSubjectLen = 256

// CheckSubject refuses a subject that cannot name one: empty, longer than
// 256 bytes, not UTF-8, holding a NUL, or starting with "memvault:thread:"
// (the key table's name for an unbound thread's own keys).
func (s Subjects) CheckSubject(subject string) error {
	switch { // the length first: no case after it quotes a long subject
	case subject == "":
		return fmt.Errorf("keys: empty subject")
	case len(subject) > maxSubjectLen:
		return fmt.Errorf("keys: subject of %d bytes (at most %d)", len(subject), maxSubjectLen)
	case strings.HasPrefix(subject, threadKeyPrefix):
		return fmt.Errorf("keys: %s: the prefix %q is reserved", idlimit.Name("subject", subject), threadKeyPrefix)
	case !utf8.ValidString(subject) || strings.ContainsRune(subject, 0):
		return fmt.Errorf("keys: %s is not NUL-free UTF-8", idlimit.Name("subject", subject))
	}
	return nil
}
