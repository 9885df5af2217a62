package storetest

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/memvault/memvault/store"
)

func nanValue() float64 { return math.NaN() }

func (r *runner) testPrefixBoundaries(t *testing.T) {
	e := r.plain(t)
	for _, n := range []string{"a", "a.b", "a.bc", "a.b.c", "ab", "a.b.c.d", "b.a"} {
		e.put(store.ParseNamespace(n), "k", map[string]any{"ns": n})
	}
	cases := []struct {
		prefix store.Namespace
		want   []string
	}{
		{nil, []string{"a", "a.b", "a.bc", "a.b.c", "ab", "a.b.c.d", "b.a"}},
		{ns("a"), []string{"a", "a.b", "a.bc", "a.b.c", "a.b.c.d"}},
		{ns("a", "b"), []string{"a.b", "a.b.c", "a.b.c.d"}},
		{ns("a", "bc"), []string{"a.bc"}},
		{ns("a", "b", "c"), []string{"a.b.c", "a.b.c.d"}},
		{ns("ab"), []string{"ab"}},
		{ns("a", "b", "c", "d", "e"), nil},
		{ns("b"), []string{"b.a"}},
		{ns("a", "*"), nil}, // '*' is only a wildcard in list_namespaces
	}
	for _, c := range cases {
		name := c.prefix.String()
		if name == "" {
			name = "root"
		}
		t.Run("Search/"+name, func(t *testing.T) {
			got := e.search(c.prefix, store.SearchOptions{Limit: 100})
			var nss []string
			for _, it := range got {
				nss = append(nss, it.Namespace.String())
			}
			sameSet(t, "namespaces found", nss, c.want)
		})
		t.Run("List/"+name, func(t *testing.T) {
			if c.prefix.String() == "a.*" {
				return // a wildcard there; covered by ListNamespaces
			}
			sameSet(t, "namespaces", nsStrings(e.list(store.ListNamespacesOptions{Prefix: c.prefix})), c.want)
		})
	}
}

// metaLabels are labels with LIKE, regex and SQL quoting metacharacters.
var metaLabels = []string{
	"%", "_", `\`, "[", "]", "(", ")", "$", "^", "'", `"`, "+", "?", "|", "{", "}",
	"a%", "a_", `a\`, `\%`, `\_`, "a|b", "a+", "a?", "(a)", "[a]", "^a$", "a'b", "%%", "__",
}

func (r *runner) testMetacharacters(t *testing.T) {
	e := r.plain(t)
	// Decoys: labels a LIKE or regex reading of a metacharacter label would
	// also match.
	decoys := []string{"a", "ab", "aa", "x", "a\\b", "abc", "b"}
	for _, l := range append(slices.Clone(metaLabels), decoys...) {
		e.put(ns("m", l), "k", map[string]any{"label": l})
		e.put(ns("m", l, "child"), "k", map[string]any{"label": l})
	}
	e.put(ns("m", "*"), "k", map[string]any{"label": "*"})
	for _, l := range metaLabels {
		t.Run(label(l), func(t *testing.T) {
			got := e.search(ns("m", l), store.SearchOptions{Limit: 100})
			var nss []string
			for _, it := range got {
				nss = append(nss, it.Namespace.String())
			}
			sameSet(t, "search", nss, []string{"m." + l, "m." + l + ".child"})
			equalValue(t, "get", e.mustGet(ns("m", l), "k").Value, map[string]any{"label": l})
			sameSet(t, "list prefix", nsStrings(e.list(store.ListNamespacesOptions{Prefix: ns("m", l)})),
				[]string{"m." + l, "m." + l + ".child"})
			sameSet(t, "list suffix", nsStrings(e.list(store.ListNamespacesOptions{Suffix: ns(l)})),
				[]string{"m." + l})
			sameSet(t, "list suffix child", nsStrings(e.list(store.ListNamespacesOptions{Suffix: ns(l, "child")})),
				[]string{"m." + l + ".child"})
		})
	}
	t.Run("StarLabelSearch", func(t *testing.T) {
		got := e.search(ns("m", "*"), store.SearchOptions{Limit: 100})
		equalStrings(t, "search", ids(got), []string{"m.*/k"})
	})
	t.Run("StarLabelIsWildcardInList", func(t *testing.T) {
		got := e.list(store.ListNamespacesOptions{Prefix: ns("m", "*"), MaxDepth: 2, Limit: 1000})
		if want := len(metaLabels) + len(decoys) + 1; len(got) != want {
			t.Fatalf("list m.* found %d namespaces, want %d", len(got), want)
		}
	})
}

// label makes a subtest name for a label.
func label(l string) string {
	var b strings.Builder
	for _, r := range l {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
		} else {
			b.WriteString("_x")
			b.WriteString(strings.ToUpper(string("0123456789abcdef"[r>>4&0xf])) + string("0123456789abcdef"[r&0xf]))
		}
	}
	return b.String()
}

func (r *runner) testListNamespaces(t *testing.T) {
	e := r.plain(t)
	all := []string{"a.b.c", "a.b.d", "a.c.d", "a.x", "b.b.c", "b", "c.d.e.f", "a-"}
	for _, n := range all {
		e.put(store.ParseNamespace(n), "k1", map[string]any{})
		e.put(store.ParseNamespace(n), "k2", map[string]any{})
	}
	cases := []struct {
		name string
		opt  store.ListNamespacesOptions
		want []string
	}{
		{"All", store.ListNamespacesOptions{}, []string{"a-", "a.b.c", "a.b.d", "a.c.d", "a.x", "b", "b.b.c", "c.d.e.f"}},
		{"PrefixA", store.ListNamespacesOptions{Prefix: ns("a")}, []string{"a.b.c", "a.b.d", "a.c.d", "a.x"}},
		{"PrefixAB", store.ListNamespacesOptions{Prefix: ns("a", "b")}, []string{"a.b.c", "a.b.d"}},
		{"PrefixFull", store.ListNamespacesOptions{Prefix: ns("a", "b", "c")}, []string{"a.b.c"}},
		{"PrefixTooLong", store.ListNamespacesOptions{Prefix: ns("a", "b", "c", "d")}, nil},
		{"PrefixNoMatch", store.ListNamespacesOptions{Prefix: ns("z")}, nil},
		{"PrefixWildcardFirst", store.ListNamespacesOptions{Prefix: ns("*", "b")}, []string{"a.b.c", "a.b.d", "b.b.c"}},
		{"PrefixWildcardMiddle", store.ListNamespacesOptions{Prefix: ns("a", "*", "d")}, []string{"a.b.d", "a.c.d"}},
		{"PrefixWildcardOnly", store.ListNamespacesOptions{Prefix: ns("*")}, []string{"a-", "a.b.c", "a.b.d", "a.c.d", "a.x", "b", "b.b.c", "c.d.e.f"}},
		{"PrefixFourWildcards", store.ListNamespacesOptions{Prefix: ns("*", "*", "*", "*")}, []string{"c.d.e.f"}},
		{"SuffixD", store.ListNamespacesOptions{Suffix: ns("d")}, []string{"a.b.d", "a.c.d"}},
		{"SuffixC", store.ListNamespacesOptions{Suffix: ns("c")}, []string{"a.b.c", "b.b.c"}},
		{"SuffixTwo", store.ListNamespacesOptions{Suffix: ns("b", "c")}, []string{"a.b.c", "b.b.c"}},
		{"SuffixWildcard", store.ListNamespacesOptions{Suffix: ns("*", "d")}, []string{"a.b.d", "a.c.d"}},
		{"SuffixWholeNamespace", store.ListNamespacesOptions{Suffix: ns("b")}, []string{"b"}},
		{"SuffixTooLong", store.ListNamespacesOptions{Suffix: ns("*", "*", "*", "*", "*")}, nil},
		{"PrefixAndSuffix", store.ListNamespacesOptions{Prefix: ns("a"), Suffix: ns("d")}, []string{"a.b.d", "a.c.d"}},
		{"PrefixAndSuffixOverlap", store.ListNamespacesOptions{Prefix: ns("b"), Suffix: ns("b")}, []string{"b"}},
		{"MaxDepth1", store.ListNamespacesOptions{MaxDepth: 1}, []string{"a", "a-", "b", "c"}},
		{"MaxDepth2", store.ListNamespacesOptions{MaxDepth: 2}, []string{"a-", "a.b", "a.c", "a.x", "b", "b.b", "c.d"}},
		{"MaxDepth3", store.ListNamespacesOptions{MaxDepth: 3}, []string{"a-", "a.b.c", "a.b.d", "a.c.d", "a.x", "b", "b.b.c", "c.d.e"}},
		{"MaxDepthLarge", store.ListNamespacesOptions{MaxDepth: 10}, []string{"a-", "a.b.c", "a.b.d", "a.c.d", "a.x", "b", "b.b.c", "c.d.e.f"}},
		{"MaxDepthWithPrefix", store.ListNamespacesOptions{Prefix: ns("a"), MaxDepth: 2}, []string{"a.b", "a.c", "a.x"}},
		{"MaxDepthWithSuffix", store.ListNamespacesOptions{Suffix: ns("d"), MaxDepth: 1}, []string{"a"}},
		{"Limit", store.ListNamespacesOptions{Limit: 3}, []string{"a-", "a.b.c", "a.b.d"}},
		{"LimitOffset", store.ListNamespacesOptions{Limit: 3, Offset: 3}, []string{"a.c.d", "a.x", "b"}},
		{"OffsetTail", store.ListNamespacesOptions{Offset: 6}, []string{"b.b.c", "c.d.e.f"}},
		{"OffsetPastEnd", store.ListNamespacesOptions{Offset: 100}, nil},
		{"MaxDepthPaging", store.ListNamespacesOptions{MaxDepth: 1, Limit: 2, Offset: 1}, []string{"a-", "b"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			equalStrings(t, "namespaces", nsStrings(e.list(c.opt)), c.want)
		})
	}
	t.Run("DefaultLimit", func(t *testing.T) {
		e := r.plain(t)
		for _, k := range seqKeys("n", store.DefaultListNamespacesLimit+5) {
			e.put(ns("many", k), "k", map[string]any{})
		}
		if got := e.list(store.ListNamespacesOptions{}); len(got) != store.DefaultListNamespacesLimit {
			t.Fatalf("got %d namespaces, want the default limit %d", len(got), store.DefaultListNamespacesLimit)
		}
	})
	t.Run("PagesConcatenate", func(t *testing.T) {
		full := nsStrings(e.list(store.ListNamespacesOptions{}))
		var paged []string
		for off := 0; off < len(full)+3; off += 3 {
			paged = append(paged, nsStrings(e.list(store.ListNamespacesOptions{Limit: 3, Offset: off}))...)
		}
		equalStrings(t, "concatenated pages", paged, full)
	})
	t.Run("Empty", func(t *testing.T) {
		e := r.plain(t)
		if got := e.list(store.ListNamespacesOptions{}); len(got) != 0 {
			t.Fatalf("empty store lists %v", got)
		}
	})
}
