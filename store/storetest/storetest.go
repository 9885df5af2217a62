package storetest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"testing"
	"time"

	"github.com/memvault/memvault/store/internal/filtering"
	"github.com/memvault/memvault/store/internal/indexing"

	"github.com/memvault/memvault/store"
)

// Config is what the suite asks of a new store.
type Config struct {
	// Index enables semantic search when non-nil.
	Index *store.IndexConfig
	// TTL enables expiry when non-nil.
	TTL *store.TTLConfig
	// Now is the clock the store must use for every timestamp.
	Now func() time.Time
}

// NewStore builds an empty store for one subtest.
type NewStore func(t *testing.T, cfg Config) store.Store

// Vocabulary is the word list of the AxisEmbedder the suite configures:
// "apple" is axis 0, "banana" axis 1, "cherry" axis 2, "date" axis 3.
var Vocabulary = []string{"apple", "banana", "cherry", "date"}

// Run runs the whole suite against the stores newStore builds.
func Run(t *testing.T, newStore func(t *testing.T, cfg Config) store.Store) {
	r := &runner{newStore: newStore}
	t.Run("CRUD", r.testCRUD)
	t.Run("Validation", r.testValidation)
	t.Run("IDs", r.testIDs)
	t.Run("Limits", r.testLimits)
	t.Run("PrefixBoundaries", r.testPrefixBoundaries)
	t.Run("Metacharacters", r.testMetacharacters)
	t.Run("ListNamespaces", r.testListNamespaces)
	t.Run("Batch", r.testBatch)
	t.Run("Filters", r.testFilters)
	t.Run("Search", r.testSearch)
	t.Run("VectorSearch", r.testVectorSearch)
	t.Run("TTL", r.testTTL)
	t.Run("Values", r.testValues)
	t.Run("Fidelity", r.testFidelity)
	t.Run("ListItems", r.testListItems)
	t.Run("DeletePrefix", r.testDeletePrefix)
	t.Run("PutIf", r.testPutIf)
	t.Run("Concurrency", r.testConcurrency)
	t.Run("Lifecycle", r.testLifecycle)
}

type runner struct {
	newStore NewStore
}

// env is one store under test with its clock.
type env struct {
	t     testing.TB
	s     store.Store
	clock *Clock
	ctx   context.Context
	emb   *AxisEmbedder
}

// open builds a store; cfg.Now is replaced by a fresh fake clock.
func (r *runner) open(t *testing.T, cfg Config) *env {
	t.Helper()
	e := &env{t: t, clock: NewClock(), ctx: context.Background()}
	cfg.Now = e.clock.Now
	if cfg.Index != nil {
		if a, ok := cfg.Index.Embedder.(*AxisEmbedder); ok {
			e.emb = a
		}
	}
	e.s = r.newStore(t, cfg)
	if e.s == nil {
		t.Fatal("storetest: newStore returned nil")
	}
	if c, ok := e.s.(io.Closer); ok {
		t.Cleanup(func() {
			if err := c.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
		})
	}
	return e
}

// plain opens a store without index or TTL.
func (r *runner) plain(t *testing.T) *env { return r.open(t, Config{}) }

// indexed opens a store with an AxisEmbedder index over fields and dist.
func (r *runner) indexed(t *testing.T, dist store.Distance, fields ...string) *env {
	cfg := Config{Index: &store.IndexConfig{
		Embedder: NewAxisEmbedder(Vocabulary...),
		Distance: dist,
		Fields:   fields,
	}}
	if fields == nil {
		cfg.Index.Fields = nil
	}
	return r.open(t, cfg)
}

// withTTL opens a store with the given TTL config (sweeper disabled unless
// the config sets an interval).
func (r *runner) withTTL(t *testing.T, cfg store.TTLConfig) *env {
	if cfg.SweepInterval == 0 {
		cfg.SweepInterval = -1
	}
	return r.open(t, Config{TTL: &cfg})
}

func ns(labels ...string) store.Namespace { return store.Namespace(labels) }

func (e *env) put(n store.Namespace, key string, v map[string]any, opts ...store.PutOption) {
	e.t.Helper()
	if err := e.s.Put(e.ctx, n, key, v, opts...); err != nil {
		e.t.Fatalf("Put(%v, %q): %v", n, key, err)
	}
}

func (e *env) get(n store.Namespace, key string, opts ...store.GetOption) *store.Item {
	e.t.Helper()
	it, err := e.s.Get(e.ctx, n, key, opts...)
	if err != nil {
		e.t.Fatalf("Get(%v, %q): %v", n, key, err)
	}
	return it
}

func (e *env) mustGet(n store.Namespace, key string, opts ...store.GetOption) *store.Item {
	e.t.Helper()
	it := e.get(n, key, opts...)
	if it == nil {
		e.t.Fatalf("Get(%v, %q) = nil, want an item", n, key)
	}
	return it
}

func (e *env) del(n store.Namespace, key string) {
	e.t.Helper()
	if err := e.s.Delete(e.ctx, n, key); err != nil {
		e.t.Fatalf("Delete(%v, %q): %v", n, key, err)
	}
}

func (e *env) search(prefix store.Namespace, opt store.SearchOptions) []store.SearchItem {
	e.t.Helper()
	items, err := e.s.Search(e.ctx, prefix, opt)
	if err != nil {
		e.t.Fatalf("Search(%v, %+v): %v", prefix, opt, err)
	}
	return items
}

func (e *env) list(opt store.ListNamespacesOptions) []store.Namespace {
	e.t.Helper()
	out, err := e.s.ListNamespaces(e.ctx, opt)
	if err != nil {
		e.t.Fatalf("ListNamespaces(%+v): %v", opt, err)
	}
	return out
}

// ids names search results "ns/key" (ns in dotted form).
func ids(items []store.SearchItem) []string {
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = it.Namespace.String() + "/" + it.Key
	}
	return out
}

// keys lists the keys of search results.
func keys(items []store.SearchItem) []string {
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = it.Key
	}
	return out
}

func nsStrings(nss []store.Namespace) []string {
	out := make([]string, len(nss))
	for i, n := range nss {
		out[i] = n.String()
	}
	return out
}

func equalStrings(t testing.TB, what string, got, want []string) {
	t.Helper()
	if got == nil {
		got = []string{}
	}
	if want == nil {
		want = []string{}
	}
	if !slices.Equal(got, want) {
		t.Fatalf("%s = %q, want %q", what, got, want)
	}
}

func sameSet(t testing.TB, what string, got, want []string) {
	t.Helper()
	g, w := slices.Clone(got), slices.Clone(want)
	slices.Sort(g)
	slices.Sort(w)
	equalStrings(t, what+" (as a set)", g, w)
}

func wantErr(t testing.TB, what string, err, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Fatalf("%s: error %v, want %v", what, err, target)
	}
}

func equalValue(t testing.TB, what string, got, want map[string]any) {
	t.Helper()
	if !filtering.JSONEqual(got, want) {
		t.Fatalf("%s = %s, want %s", what, short(indexing.PythonJSON(got)), short(indexing.PythonJSON(want)))
	}
}

func short(s string) string {
	if len(s) > 200 {
		return s[:200] + fmt.Sprintf("...(%d bytes)", len(s))
	}
	return s
}

func sameTime(t testing.TB, what string, got, want time.Time) {
	t.Helper()
	if !got.Equal(want) {
		t.Fatalf("%s = %v, want %v", what, got, want)
	}
}

func seqKeys(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s%02d", prefix, i)
	}
	return out
}

func ptr[T any](v T) *T { return &v }
