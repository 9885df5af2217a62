package keys_test

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/memvault/memvault/keys"
	"github.com/memvault/memvault/keys/memkeys"
	"github.com/memvault/memvault/memvaulttest/testkeys"
)

// adkLayout is the ADK adapter's layout: sessions, memories and user state
// each under the app, the user after them.
var adkLayout = keys.Subjects{NamespacePrefixes: [][]string{
	{"adk", "*", "sessions"}, {"adk", "*", "memory"}, {"adk", "*", "user-state"},
}}

// TestNamespacePrefixesWithWildcards: a "*" label of a prefix matches any
// one label; every prefix's namespaces have subjects; NamespacePrefix
// alone keeps working as before.
func TestNamespacePrefixesWithWildcards(t *testing.T) {
	s := adkLayout
	s.NamespacePrefix = []string{"users"}
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	for ns, want := range map[string]string{
		"adk.desk.sessions.carol":          "carol",
		"adk.shop.memory.carol.s1":         "carol",
		"adk.desk.user-state.dave":         "dave",
		"adk.desk.user-state":              "", // the old layout (user as key): no label after the prefix
		"adk.desk.app-state":               "",
		"adk.desk.sessions":                "",
		"adk.sessions.carol":               "",
		"users.erin.prefs":                 "erin",
		"users":                            "",
		"other.desk.memory.carol":          "",
		"adk.desk.memory.carol%2Esmith.s1": "carol%2Esmith",
	} {
		if got := s.NamespaceSubject(ns); got != want {
			t.Errorf("NamespaceSubject(%q) = %q, want %q", ns, got, want)
		}
	}
	want := [][]string{{"users", "carol"}, {"adk", "*", "sessions", "carol"}, {"adk", "*", "memory", "carol"}, {"adk", "*", "user-state", "carol"}}
	if got := s.Namespaces("carol"); !reflect.DeepEqual(got, want) {
		t.Fatalf("Namespaces = %q, want %q", got, want)
	}
	if got := (keys.Subjects{NamespacePrefix: []string{"users"}}).Namespaces("carol"); !reflect.DeepEqual(got, [][]string{{"users", "carol"}}) {
		t.Fatalf("Namespaces with one prefix = %q", got)
	}
	if got := (keys.Subjects{}).Namespaces("carol"); got != nil {
		t.Fatalf("Namespaces without prefixes = %q", got)
	}
}

// TestBadNamespacePrefixes: empty labels, dots, a leading "*" and
// prefixes that would give one namespace two subjects are refused, by
// Validate and by keys.New.
func TestBadNamespacePrefixes(t *testing.T) {
	for name, c := range map[string]struct {
		s    keys.Subjects
		want string
	}{
		"empty prefix":    {keys.Subjects{NamespacePrefixes: [][]string{{}}}, "empty namespace prefix"},
		"empty label":     {keys.Subjects{NamespacePrefixes: [][]string{{"adk", "", "memory"}}}, "non-empty"},
		"dot":             {keys.Subjects{NamespacePrefix: []string{"a.b"}}, "without '.'"},
		"nul":             {keys.Subjects{NamespacePrefix: []string{"a\x00"}}, "NUL-free"},
		"leading star":    {keys.Subjects{NamespacePrefixes: [][]string{{"*", "memory"}}}, `starts with "*"`},
		"star alone":      {keys.Subjects{NamespacePrefix: []string{"*"}}, `starts with "*"`},
		"nested":          {keys.Subjects{NamespacePrefix: []string{"users"}, NamespacePrefixes: [][]string{{"users", "*", "x"}}}, "different subjects"},
		"wildcard nested": {keys.Subjects{NamespacePrefixes: [][]string{{"adk", "*"}, {"adk", "desk", "memory"}}}, "different subjects"},
	} {
		err := c.s.Validate()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: Validate = %v, want an error saying %q", name, err, c.want)
		}
		if _, err := keys.New(keys.Options{Master: testkeys.Encrypting(t), Table: memkeys.New(), Subjects: c.s}); err == nil {
			t.Errorf("%s: keys.New accepted %+v", name, c.s)
		}
	}
	for name, s := range map[string]keys.Subjects{
		"same length overlap": {NamespacePrefixes: [][]string{{"adk", "*", "memory"}, {"adk", "desk", "memory"}}},
		"same prefix twice":   {NamespacePrefix: []string{"users"}, NamespacePrefixes: [][]string{{"users"}}},
		"disjoint lengths":    {NamespacePrefixes: [][]string{{"users"}, {"adk", "*", "memory"}}},
		"star in a label":     {NamespacePrefix: []string{"a*b"}},
		"none":                {},
	} {
		if err := s.Validate(); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// BenchmarkNamespaceSubject: the subject lookup every sealed store value
// makes, with the three ADK prefixes and one plain prefix.
func BenchmarkNamespaceSubject(b *testing.B) {
	s := adkLayout
	s.NamespacePrefix = []string{"users"}
	b.ReportAllocs()
	for b.Loop() {
		if s.NamespaceSubject("adk.desk.user-state.carol") != "carol" {
			b.Fatal("wrong subject")
		}
	}
}

// TestCheckSubjectLongNotEchoed: a subject over the length limit is named
// by its length whatever else is wrong with it — a 64 KiB one starting
// with the reserved prefix came back whole.
func TestCheckSubjectLongNotEchoed(t *testing.T) {
	for _, s := range []string{"memvault:thread:" + strings.Repeat("x", 64<<10), strings.Repeat("\x00", 64<<10)} {
		err := keys.Subjects{}.CheckSubject(s)
		if err == nil || len(err.Error()) > 200 {
			t.Errorf("CheckSubject of %d bytes = a %d-byte error", len(s), len(fmt.Sprint(err)))
		}
	}
}
