package storetest

import (
	"errors"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/memvault/memvault/embeddings"
	"github.com/memvault/memvault/store"
)

func (r *runner) testSearch(t *testing.T) {
	t.Run("NewestFirst", func(t *testing.T) {
		e := r.plain(t)
		for _, k := range []string{"k1", "k2", "k3"} {
			e.put(ns("s"), k, map[string]any{"k": k})
			e.clock.Advance(time.Second)
		}
		got := e.search(ns("s"), store.SearchOptions{})
		equalStrings(t, "order", keys(got), []string{"k3", "k2", "k1"})
		for _, it := range got {
			if it.Score != nil {
				t.Fatalf("score %v without query", *it.Score)
			}
		}
	})
	t.Run("ReplaceMovesToFront", func(t *testing.T) {
		e := r.plain(t)
		for _, k := range []string{"k1", "k2", "k3"} {
			e.put(ns("s"), k, map[string]any{})
			e.clock.Advance(time.Second)
		}
		e.put(ns("s"), "k1", map[string]any{"v": 2})
		equalStrings(t, "order", keys(e.search(ns("s"), store.SearchOptions{})), []string{"k1", "k3", "k2"})
	})
	t.Run("TieBreakNamespaceThenKey", func(t *testing.T) {
		e := r.plain(t)
		e.put(ns("t", "b"), "a", map[string]any{})
		e.put(ns("t", "a"), "c", map[string]any{})
		e.put(ns("t", "a"), "b", map[string]any{})
		e.put(ns("t"), "z", map[string]any{})
		equalStrings(t, "order", ids(e.search(ns("t"), store.SearchOptions{})),
			[]string{"t/z", "t.a/b", "t.a/c", "t.b/a"})
	})
	t.Run("DefaultLimit", func(t *testing.T) {
		e := r.plain(t)
		for _, k := range seqKeys("k", 15) {
			e.put(ns("s"), k, map[string]any{})
		}
		if got := e.search(ns("s"), store.SearchOptions{}); len(got) != store.DefaultSearchLimit {
			t.Fatalf("got %d items, want the default limit %d", len(got), store.DefaultSearchLimit)
		}
	})
	t.Run("LimitOffset", func(t *testing.T) {
		e := r.plain(t)
		for _, k := range seqKeys("k", 10) {
			e.put(ns("s"), k, map[string]any{})
			e.clock.Advance(time.Second)
		}
		equalStrings(t, "page", keys(e.search(ns("s"), store.SearchOptions{Limit: 3, Offset: 2})), []string{"k07", "k06", "k05"})
		equalStrings(t, "tail", keys(e.search(ns("s"), store.SearchOptions{Limit: 5, Offset: 8})), []string{"k01", "k00"})
		equalStrings(t, "past end", keys(e.search(ns("s"), store.SearchOptions{Offset: 10})), nil)
		equalStrings(t, "limit 1", keys(e.search(ns("s"), store.SearchOptions{Limit: 1})), []string{"k09"})
	})
	t.Run("EmptyStore", func(t *testing.T) {
		e := r.plain(t)
		if got := e.search(nil, store.SearchOptions{}); len(got) != 0 {
			t.Fatalf("empty store found %v", ids(got))
		}
	})
	t.Run("QueryWithoutIndexIsIgnored", func(t *testing.T) {
		e := r.plain(t)
		e.put(ns("s"), "k1", map[string]any{"text": "apple"})
		e.clock.Advance(time.Second)
		e.put(ns("s"), "k2", map[string]any{"text": "banana"})
		got := e.search(ns("s"), store.SearchOptions{Query: "apple"})
		equalStrings(t, "order", keys(got), []string{"k2", "k1"})
		if got[0].Score != nil {
			t.Fatal("score without index")
		}
	})
	t.Run("PagesConcatenate", func(t *testing.T) {
		e := r.plain(t)
		for i := range 25 {
			e.put(ns("p", fmt.Sprint(i%3)), fmt.Sprintf("k%02d", i), map[string]any{})
			if i%4 == 0 {
				e.clock.Advance(time.Second) // leave ties too
			}
		}
		checkPages(t, e, ns("p"), store.SearchOptions{}, 25)
	})
}

// checkPages asserts that pages of several sizes concatenate to the full
// result, without duplicates.
func checkPages(t *testing.T, e *env, prefix store.Namespace, opt store.SearchOptions, total int) {
	t.Helper()
	full := opt
	full.Limit = total + 10
	all := ids(e.search(prefix, full))
	if len(all) != total {
		t.Fatalf("full search found %d items, want %d", len(all), total)
	}
	seen := map[string]bool{}
	for _, id := range all {
		if seen[id] {
			t.Fatalf("duplicate %s in full search", id)
		}
		seen[id] = true
	}
	for _, size := range []int{1, 4, 7} {
		var paged []string
		for off := 0; off < total+size; off += size {
			page := opt
			page.Limit, page.Offset = size, off
			paged = append(paged, ids(e.search(prefix, page))...)
		}
		equalStrings(t, fmt.Sprintf("pages of %d", size), paged, all)
	}
}

// scoreCase is an expected score per key.
type scoreCase map[string]float64

var (
	sqrt2 = math.Sqrt(2)
	sqrt3 = math.Sqrt(3)
	sqrt5 = math.Sqrt(5)
)

func (r *runner) testVectorSearch(t *testing.T) {
	docs := []struct{ key, text string }{
		{"a", "apple"},               // [1 0 0 0]
		{"ab", "apple banana"},       // [1 1 0 0]
		{"bb", "banana banana"},      // [0 2 0 0]
		{"c", "cherry"},              // [0 0 1 0]
		{"acd", "apple cherry date"}, // [1 0 1 1]
	}
	expected := map[store.Distance]map[string]scoreCase{
		store.Cosine: {
			"apple":        {"a": 1, "ab": 1 / sqrt2, "bb": 0, "c": 0, "acd": 1 / sqrt3},
			"apple banana": {"a": 1 / sqrt2, "ab": 1, "bb": 1 / sqrt2, "c": 0, "acd": 1 / (sqrt2 * sqrt3)},
		},
		store.L2: {
			"apple":        {"a": 0, "ab": -1, "bb": -sqrt5, "c": -sqrt2, "acd": -sqrt2},
			"apple banana": {"a": -1, "ab": 0, "bb": -sqrt2, "c": -sqrt3, "acd": -sqrt3},
		},
		store.InnerProduct: {
			"apple":        {"a": 1, "ab": 1, "bb": 0, "c": 0, "acd": 1},
			"apple banana": {"a": 1, "ab": 2, "bb": 2, "c": 0, "acd": 1},
		},
	}
	for _, dist := range []store.Distance{store.Cosine, store.L2, store.InnerProduct} {
		for _, fields := range [][]string{nil, {"text"}} {
			fname := "Root"
			if fields != nil {
				fname = "Field"
			}
			for _, q := range []string{"apple", "apple banana"} {
				t.Run(fmt.Sprintf("Score/%s/%s/%s", dist, fname, label(q)), func(t *testing.T) {
					e := r.indexed(t, dist, fields...)
					for _, d := range docs {
						e.put(ns("v"), d.key, map[string]any{"text": d.text})
						e.clock.Advance(time.Second)
					}
					got := e.search(ns("v"), store.SearchOptions{Query: q})
					checkScores(t, got, expected[dist][q])
				})
			}
		}
	}
	t.Run("NonFiniteVectorRefused", func(t *testing.T) {
		// An embedder's NaN or infinite component is refused with
		// embeddings.ErrNonFinite: the put (and its whole batch) stores
		// nothing, a query fails; it was stored and scored NaN.
		e := r.open(t, Config{Index: &store.IndexConfig{Embedder: poisonEmbedder{NewAxisEmbedder(Vocabulary...)}, Distance: store.Cosine}})
		e.put(ns("v"), "good", map[string]any{"text": "apple"})
		for _, bad := range []string{"apple poison", "apple overflow"} {
			_, err := e.s.Batch(e.ctx, []store.Op{
				store.PutOp{Namespace: ns("v"), Key: "fine", Value: map[string]any{"text": "banana"}},
				store.PutOp{Namespace: ns("v"), Key: "bad", Value: map[string]any{"text": bad}},
			})
			if !errors.Is(err, embeddings.ErrNonFinite) {
				t.Fatalf("Batch with a vector of %q = %v, want embeddings.ErrNonFinite", bad, err)
			}
			if err := e.s.Put(e.ctx, ns("v"), "bad", map[string]any{"text": bad}); !errors.Is(err, embeddings.ErrNonFinite) {
				t.Fatalf("Put of %q = %v, want embeddings.ErrNonFinite", bad, err)
			}
			if _, err := e.s.Search(e.ctx, ns("v"), store.SearchOptions{Query: bad}); !errors.Is(err, embeddings.ErrNonFinite) {
				t.Fatalf("Search for %q = %v, want embeddings.ErrNonFinite", bad, err)
			}
		}
		for _, k := range []string{"fine", "bad"} {
			if it := e.get(ns("v"), k); it != nil {
				t.Errorf("%q was stored by a refused batch", k)
			}
		}
		checkScores(t, e.search(ns("v"), store.SearchOptions{Query: "apple"}), scoreCase{"good": 1})
	})
	t.Run("DefaultDistanceIsCosine", func(t *testing.T) {
		e := r.indexed(t, "", "text")
		for _, d := range docs {
			e.put(ns("v"), d.key, map[string]any{"text": d.text})
		}
		checkScores(t, e.search(ns("v"), store.SearchOptions{Query: "apple"}), expected[store.Cosine]["apple"])
	})
	t.Run("BestFieldPerItem", func(t *testing.T) {
		e := r.indexed(t, store.Cosine, "title", "body")
		e.put(ns("v"), "x", map[string]any{"title": "apple", "body": "banana"})
		e.put(ns("v"), "y", map[string]any{"title": "banana cherry", "body": "date"})
		e.put(ns("v"), "z", map[string]any{"title": "cherry"})
		checkScores(t, e.search(ns("v"), store.SearchOptions{Query: "banana"}), scoreCase{"x": 1, "y": 1 / sqrt2, "z": 0})
		checkScores(t, e.search(ns("v"), store.SearchOptions{Query: "date"}), scoreCase{"x": 0, "y": 1, "z": 0})
	})
	t.Run("GroupPath", func(t *testing.T) {
		e := r.indexed(t, store.Cosine, "{title,meta.note}")
		e.put(ns("v"), "x", map[string]any{"title": "apple", "meta": map[string]any{"note": "banana"}})
		e.put(ns("v"), "y", map[string]any{"title": "cherry"})
		checkScores(t, e.search(ns("v"), store.SearchOptions{Query: "banana"}), scoreCase{"x": 1, "y": 0})
	})
	t.Run("ListPath", func(t *testing.T) {
		e := r.indexed(t, store.Cosine, "tags[*]")
		e.put(ns("v"), "x", map[string]any{"tags": []any{"apple", "banana"}})
		e.put(ns("v"), "y", map[string]any{"tags": []any{"apple banana"}})
		e.put(ns("v"), "z", map[string]any{"tags": []any{"cherry"}})
		checkScores(t, e.search(ns("v"), store.SearchOptions{Query: "banana"}), scoreCase{"x": 1, "y": 1 / sqrt2, "z": 0})
	})
	t.Run("IndexedPathMissingMeansUnscored", func(t *testing.T) {
		e := r.indexed(t, store.Cosine, "text")
		e.put(ns("v"), "x", map[string]any{"text": "apple"})
		e.put(ns("v"), "y", map[string]any{"other": "apple"})
		e.put(ns("v"), "n", map[string]any{"text": nil})
		got := e.search(ns("v"), store.SearchOptions{Query: "apple"})
		checkScores(t, got, scoreCase{"x": 1, "y": math.NaN(), "n": math.NaN()})
	})
	t.Run("UnscoredAfterScoredWithOffset", func(t *testing.T) {
		e := r.indexed(t, store.Cosine, "text")
		e.put(ns("v"), "s1", map[string]any{"text": "apple"})
		e.clock.Advance(time.Second)
		e.put(ns("v"), "s2", map[string]any{"text": "apple banana"})
		e.clock.Advance(time.Second)
		e.put(ns("v"), "s3", map[string]any{"text": "banana"})
		e.clock.Advance(time.Second)
		e.put(ns("v"), "u1", map[string]any{"other": "apple"})
		e.clock.Advance(time.Second)
		e.put(ns("v"), "u2", map[string]any{"text": "apple"}, store.WithoutIndex())
		q := store.SearchOptions{Query: "apple"}
		all := e.search(ns("v"), q)
		equalStrings(t, "full", keys(all), []string{"s1", "s2", "s3", "u2", "u1"})
		checkScores(t, all, scoreCase{"s1": 1, "s2": 1 / sqrt2, "s3": 0, "u1": math.NaN(), "u2": math.NaN()})
		for _, c := range []struct {
			limit, offset int
			want          []string
		}{
			{2, 0, []string{"s1", "s2"}},
			{2, 2, []string{"s3", "u2"}},
			{2, 3, []string{"u2", "u1"}},
			{2, 4, []string{"u1"}},
			{2, 5, nil},
			{10, 1, []string{"s2", "s3", "u2", "u1"}},
		} {
			q.Limit, q.Offset = c.limit, c.offset
			equalStrings(t, fmt.Sprintf("limit %d offset %d", c.limit, c.offset), keys(e.search(ns("v"), q)), c.want)
		}
	})
	t.Run("StaleVectorsDroppedWithoutIndex", func(t *testing.T) {
		e := r.indexed(t, store.Cosine, "text")
		e.put(ns("v"), "x", map[string]any{"text": "apple"})
		e.put(ns("v"), "x", map[string]any{"text": "apple"}, store.WithoutIndex())
		got := e.search(ns("v"), store.SearchOptions{Query: "apple"})
		checkScores(t, got, scoreCase{"x": math.NaN()})
	})
	t.Run("StaleVectorsDroppedFewerFields", func(t *testing.T) {
		e := r.indexed(t, store.Cosine, "title", "body")
		e.put(ns("v"), "x", map[string]any{"title": "banana", "body": "apple"})
		checkScores(t, e.search(ns("v"), store.SearchOptions{Query: "apple"}), scoreCase{"x": 1})
		e.put(ns("v"), "x", map[string]any{"title": "banana"})
		checkScores(t, e.search(ns("v"), store.SearchOptions{Query: "apple"}), scoreCase{"x": 0})
	})
	t.Run("StaleVectorsDroppedFewerListTexts", func(t *testing.T) {
		e := r.indexed(t, store.Cosine, "tags[*]")
		e.put(ns("v"), "x", map[string]any{"tags": []any{"banana", "apple"}})
		checkScores(t, e.search(ns("v"), store.SearchOptions{Query: "apple"}), scoreCase{"x": 1})
		e.put(ns("v"), "x", map[string]any{"tags": []any{"banana"}})
		checkScores(t, e.search(ns("v"), store.SearchOptions{Query: "apple"}), scoreCase{"x": 0})
	})
	t.Run("VectorsDeletedWithItem", func(t *testing.T) {
		e := r.indexed(t, store.Cosine, "text")
		e.put(ns("v"), "x", map[string]any{"text": "apple"})
		e.del(ns("v"), "x")
		e.put(ns("v"), "x", map[string]any{"text": "apple"}, store.WithoutIndex())
		checkScores(t, e.search(ns("v"), store.SearchOptions{Query: "apple"}), scoreCase{"x": math.NaN()})
	})
	t.Run("WithIndexOverride", func(t *testing.T) {
		e := r.indexed(t, store.Cosine, "title")
		e.put(ns("v"), "x", map[string]any{"title": "apple", "body": "banana"}, store.WithIndex("body"))
		checkScores(t, e.search(ns("v"), store.SearchOptions{Query: "banana"}), scoreCase{"x": 1})
		checkScores(t, e.search(ns("v"), store.SearchOptions{Query: "apple"}), scoreCase{"x": 0})
		e.put(ns("v"), "x", map[string]any{"title": "apple", "body": "banana"})
		checkScores(t, e.search(ns("v"), store.SearchOptions{Query: "apple"}), scoreCase{"x": 1})
	})
	t.Run("WithIndexInvalidPath", func(t *testing.T) {
		e := r.indexed(t, store.Cosine, "title")
		err := e.s.Put(e.ctx, ns("v"), "x", map[string]any{}, store.WithIndex("a[x]"))
		wantErr(t, "Put", err, store.ErrInvalidPath)
	})
	t.Run("FilterWithQuery", func(t *testing.T) {
		e := r.indexed(t, store.Cosine, "text")
		e.put(ns("v"), "x", map[string]any{"text": "apple", "kind": "fruit"})
		e.put(ns("v"), "y", map[string]any{"text": "apple banana", "kind": "fruit"})
		e.put(ns("v"), "z", map[string]any{"text": "apple", "kind": "other"})
		got := e.search(ns("v"), store.SearchOptions{Query: "apple", Filter: map[string]any{"kind": "fruit"}})
		checkScores(t, got, scoreCase{"x": 1, "y": 1 / sqrt2})
	})
	t.Run("PrefixWithQuery", func(t *testing.T) {
		e := r.indexed(t, store.Cosine, "text")
		e.put(ns("v", "a"), "x", map[string]any{"text": "apple"})
		e.put(ns("v", "ab"), "y", map[string]any{"text": "apple"})
		got := e.search(ns("v", "a"), store.SearchOptions{Query: "apple"})
		equalStrings(t, "found", ids(got), []string{"v.a/x"})
	})
	t.Run("RepeatedSearchesAgree", func(t *testing.T) {
		// Backends may cache per prefix (statements, plans, vectors): a
		// search repeated under a prefix full of metacharacters finds what
		// the first found, nothing from sibling namespaces, and sees a
		// change made after it. Scores are distinct and the page is
		// smaller than the prefix, so an index-served query can settle it.
		e := r.indexed(t, store.Cosine, "text")
		labels := []string{`a'b`, `x'); DROP TABLE store; --`, `\`, `\x41`, `%_`, "ü 😀", `$1`, `E'`}
		for _, l := range labels {
			e.put(ns("r", l), "x", map[string]any{"text": "apple"})
			e.put(ns("r", l), "y", map[string]any{"text": "apple banana"})
			e.put(ns("r", l, "deeper"), "z", map[string]any{"text": "apple banana cherry"})
			e.put(ns("r", l), "v", map[string]any{"text": "banana"})
			for _, sibling := range []string{l + "z", l + "-", l + "~"} {
				e.put(ns("r", sibling), "x", map[string]any{"text": "apple"})
			}
		}
		q := store.SearchOptions{Query: "apple", Limit: 2}
		for _, l := range labels {
			p := "r." + l
			for i := range 3 {
				equalStrings(t, fmt.Sprintf("%q search %d", l, i), ids(e.search(ns("r", l), q)), []string{p + "/x", p + "/y"})
			}
			e.put(ns("r", l), "y", map[string]any{"text": "cherry"})
			equalStrings(t, fmt.Sprintf("%q after a put", l), ids(e.search(ns("r", l), q)), []string{p + "/x", p + ".deeper/z"})
		}
	})
	t.Run("AcrossSubjects", func(t *testing.T) {
		// Items of several namespaces under ("users"): with per-subject
		// keys (keys.Subjects.NamespacePrefix ("users")) each user is a
		// data subject whose vectors live in a space of their own, and
		// ("users") itself and ("other") hold items of no subject. A
		// search spanning them ranks them exactly as one space would.
		for _, dist := range []store.Distance{store.Cosine, store.L2, store.InnerProduct} {
			t.Run(string(dist), func(t *testing.T) {
				e := r.indexed(t, dist, "text")
				docs := []struct {
					ns   store.Namespace
					key  string
					text string
				}{
					// Scores all distinct, in each distance: an exact tie
					// across two spaces may come out of rounding either
					// way (a rotation keeps scores up to float32 rounding).
					{ns("users", "alice"), "a1", "apple"},                                          // [1 0 0 0]
					{ns("users", "alice"), "a2", "apple apple banana"},                             // [2 1 0 0]
					{ns("users", "bob"), "b1", "apple apple apple cherry"},                         // [3 0 1 0]
					{ns("users", "bob"), "b2", "banana cherry date"},                               // [0 1 1 1]
					{ns("users", "carol", "notes"), "c1", "apple apple apple apple banana cherry"}, // [4 1 1 0]
					{ns("users"), "u", "apple apple apple apple apple date"},                       // [5 0 0 1]
					{ns("other"), "o", "apple apple apple apple apple apple banana"},               // [6 1 0 0]
				}
				for _, d := range docs {
					e.put(d.ns, d.key, map[string]any{"text": d.text, "len": len(d.text)})
					e.clock.Advance(time.Second)
				}
				e.put(ns("users", "dave"), "d", map[string]any{"other": "apple"})
				// Scores of the query "apple" ([1 0 0 0]).
				all := map[store.Distance]scoreCase{
					store.Cosine: {"a1": 1, "a2": 2 / sqrt5, "b1": 3 / math.Sqrt(10), "b2": 0, "c1": 4 / math.Sqrt(18),
						"u": 5 / math.Sqrt(26), "o": 6 / math.Sqrt(37), "d": math.NaN()},
					store.L2: {"a1": 0, "a2": -sqrt2, "b1": -sqrt5, "b2": -2, "c1": -math.Sqrt(11),
						"u": -math.Sqrt(17), "o": -math.Sqrt(26), "d": math.NaN()},
					store.InnerProduct: {"a1": 1, "a2": 2, "b1": 3, "b2": 0, "c1": 4, "u": 5, "o": 6, "d": math.NaN()},
				}[dist]
				q := store.SearchOptions{Query: "apple", Limit: 20}
				for _, c := range []struct {
					prefix store.Namespace
					keys   []string
				}{
					{nil, []string{"a1", "a2", "b1", "b2", "c1", "u", "o", "d"}},
					{ns("users"), []string{"a1", "a2", "b1", "b2", "c1", "u", "d"}},
					{ns("users", "bob"), []string{"b1", "b2"}},
					{ns("users", "carol"), []string{"c1"}},
					{ns("other"), []string{"o"}},
				} {
					want := scoreCase{}
					for _, k := range c.keys {
						want[k] = all[k]
					}
					checkScores(t, e.search(c.prefix, q), want)
				}
				got := e.search(ns("users"), store.SearchOptions{Query: "apple", Filter: map[string]any{"len": map[string]any{"$gte": 20}}})
				checkScores(t, got, scoreCase{"b1": all["b1"], "c1": all["c1"], "u": all["u"]})
			})
		}
	})
	t.Run("NoQueryOnIndexedStore", func(t *testing.T) {
		e := r.indexed(t, store.Cosine, "text")
		e.put(ns("v"), "x", map[string]any{"text": "apple"})
		e.clock.Advance(time.Second)
		e.put(ns("v"), "y", map[string]any{"text": "banana"})
		got := e.search(ns("v"), store.SearchOptions{})
		equalStrings(t, "order", keys(got), []string{"y", "x"})
		for _, it := range got {
			if it.Score != nil {
				t.Fatalf("score %v without query", *it.Score)
			}
		}
	})
	t.Run("PagesConcatenate", func(t *testing.T) {
		e := r.indexed(t, store.Cosine, "text")
		texts := []string{"apple", "apple banana", "banana", "cherry date", "apple"}
		for i := range 30 {
			v := map[string]any{"text": texts[i%len(texts)]}
			if i%7 == 0 {
				e.put(ns("p"), fmt.Sprintf("k%02d", i), v, store.WithoutIndex())
			} else {
				e.put(ns("p"), fmt.Sprintf("k%02d", i), v)
			}
			if i%4 == 0 {
				e.clock.Advance(time.Second)
			}
		}
		checkPages(t, e, ns("p"), store.SearchOptions{Query: "apple"}, 30)
	})
	t.Run("BatchPutsEmbedded", func(t *testing.T) {
		e := r.indexed(t, store.InnerProduct, "text")
		_, err := e.s.Batch(e.ctx, []store.Op{
			store.PutOp{Namespace: ns("v"), Key: "x", Value: map[string]any{"text": "cherry"}},
			store.PutOp{Namespace: ns("v"), Key: "y", Value: map[string]any{"text": "cherry cherry"}},
			store.PutOp{Namespace: ns("v"), Key: "x", Value: map[string]any{"text": "cherry cherry cherry"}},
		})
		if err != nil {
			t.Fatal(err)
		}
		checkScores(t, e.search(ns("v"), store.SearchOptions{Query: "cherry"}), scoreCase{"x": 3, "y": 2})
	})
}

// checkScores asserts the result holds exactly the keys of want, each with
// its score (NaN: no score), in non-increasing score order with unscored
// items last.
func checkScores(t *testing.T, got []store.SearchItem, want scoreCase) {
	t.Helper()
	var ks []string
	for k := range want {
		ks = append(ks, k)
	}
	sameSet(t, "keys", keys(got), ks)
	prev := math.Inf(1)
	unscored := false
	for _, it := range got {
		w := want[it.Key]
		switch {
		case math.IsNaN(w):
			if it.Score != nil {
				t.Fatalf("%s: score %v, want none", it.Key, *it.Score)
			}
			unscored = true
		case it.Score == nil:
			t.Fatalf("%s: no score, want %v", it.Key, w)
		default:
			if unscored {
				t.Fatalf("%s: scored item after an unscored one", it.Key)
			}
			if math.Abs(*it.Score-w) > 1e-6 {
				t.Fatalf("%s: score %v, want %v", it.Key, *it.Score, w)
			}
			if *it.Score > prev+1e-9 {
				t.Fatalf("%s: score %v after %v (not descending)", it.Key, *it.Score, prev)
			}
			prev = *it.Score
		}
	}
}
