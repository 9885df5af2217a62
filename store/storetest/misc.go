package storetest

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"sync"
	"testing"

	"github.com/memvault/memvault/store"
)

func (r *runner) testValues(t *testing.T) {
	roundTrips := []struct {
		name  string
		value map[string]any
	}{
		{"Unicode", map[string]any{"ru": "привет", "ja": "日本語のテキスト", "emoji": "🔑😀👍🏽", "rtl": "שלום", "combining": "e\u0301"}},
		{"UnicodeKeys", map[string]any{"ключ": 1, "鍵": []any{"値"}, "😀": map[string]any{"é": true}}},
		{"NUL", map[string]any{"s": "a\x00b", "only": "\x00", "list": []any{"\x00x"}}},
		{"ControlAndEscapes", map[string]any{"s": "line\nnext\ttab\r\"quoted\" \\ back \b\f \x01 \x1f", "html": "</script><!-- & -->", "sep": "\u2028\u2029"}},
		{"Numbers", map[string]any{"maxint": int64(math.MaxInt64), "minint": int64(math.MinInt64), "tenth": 0.1,
			"small": 1e-5, "big": 1e300, "neg": -0.5, "zero": 0, "negzero": 0.0, "third": 1.0 / 3}},
		{"Nesting", map[string]any{"deep": deep(64)}},
		{"EmptyContainers", map[string]any{"l": []any{}, "o": map[string]any{}, "s": ""}},
		{"Nulls", map[string]any{"n": nil, "l": []any{nil, nil}}},
		{"LongList", map[string]any{"l": longList(10000)}},
	}
	for _, c := range roundTrips {
		t.Run(c.name, func(t *testing.T) {
			e := r.plain(t)
			e.put(ns("v"), "k", c.value)
			equalValue(t, "get", e.mustGet(ns("v"), "k").Value, c.value)
			got := e.search(ns("v"), store.SearchOptions{})
			if len(got) != 1 {
				t.Fatalf("search found %d items", len(got))
			}
			equalValue(t, "search", got[0].Value, c.value)
		})
	}
	for _, size := range []int{1 << 20, 4 << 20} {
		t.Run(fmt.Sprintf("Large%dMiB", size>>20), func(t *testing.T) {
			e := r.plain(t)
			var b strings.Builder
			for i := 0; b.Len() < size; i++ {
				fmt.Fprintf(&b, "%08x|", i*2654435761)
			}
			s := b.String()[:size]
			e.put(ns("v"), "big", map[string]any{"blob": s, "n": size})
			it := e.mustGet(ns("v"), "big")
			got, _ := it.Value["blob"].(string)
			if len(got) != size || sha256.Sum256([]byte(got)) != sha256.Sum256([]byte(s)) {
				t.Fatalf("large value came back as %d bytes with another hash", len(got))
			}
		})
	}
	t.Run("UnicodeNamespacesAndKeys", func(t *testing.T) {
		e := r.plain(t)
		spaces := []store.Namespace{ns("日本", "ユーザー"), ns("émoji😀"), ns("日本", "ユーザー", "記憶"), ns("日本語")}
		for i, n := range spaces {
			e.put(n, "鍵🔑", map[string]any{"i": i})
			e.put(n, "ключ", map[string]any{"i": i})
		}
		equalValue(t, "get", e.mustGet(ns("日本", "ユーザー"), "鍵🔑").Value, map[string]any{"i": 0})
		sameSet(t, "search", ids(e.search(ns("日本"), store.SearchOptions{Limit: 100})),
			[]string{"日本.ユーザー/鍵🔑", "日本.ユーザー/ключ", "日本.ユーザー.記憶/鍵🔑", "日本.ユーザー.記憶/ключ"})
		sameSet(t, "list", nsStrings(e.list(store.ListNamespacesOptions{Suffix: ns("ユーザー")})), []string{"日本.ユーザー"})
		sameSet(t, "list depth", nsStrings(e.list(store.ListNamespacesOptions{MaxDepth: 1})), []string{"日本", "émoji😀", "日本語"})
	})
	t.Run("UnicodeFilter", func(t *testing.T) {
		e := r.plain(t)
		e.put(ns("v"), "a", map[string]any{"name": "日本"})
		e.put(ns("v"), "b", map[string]any{"name": "中国"})
		equalStrings(t, "filter", keys(e.search(ns("v"), store.SearchOptions{Filter: map[string]any{"name": "日本"}})), []string{"a"})
	})
}

func deep(n int) map[string]any {
	v := map[string]any{"leaf": "bottom"}
	for i := 0; i < n; i++ {
		v = map[string]any{"level": i, "child": v}
	}
	return v
}

func longList(n int) []any {
	l := make([]any, n)
	for i := range l {
		l[i] = map[string]any{"i": i, "s": fmt.Sprint(i)}
	}
	return l
}

func (r *runner) testConcurrency(t *testing.T) {
	const writers, rounds = 8, 20
	payload := func(w int) string { return strings.Repeat(string(rune('a'+w)), 2000) }
	consistent := func(v map[string]any) error {
		w, ok := toInt(v["w"])
		if !ok {
			return fmt.Errorf("bad writer field %v", v["w"])
		}
		if v["payload"] != payload(w) {
			return fmt.Errorf("torn value: writer %d with another payload", w)
		}
		return nil
	}
	t.Run("OneKeyLastWriterWins", func(t *testing.T) {
		e := r.plain(t)
		e.put(ns("c"), "k", map[string]any{"w": 0, "i": -1, "payload": payload(0)})
		var wg sync.WaitGroup
		errs := make(chan error, writers*rounds*2)
		for w := range writers {
			wg.Add(2)
			go func() {
				defer wg.Done()
				for i := range rounds {
					if err := e.s.Put(e.ctx, ns("c"), "k", map[string]any{"w": w, "i": i, "payload": payload(w)}); err != nil {
						errs <- err
					}
				}
			}()
			go func() {
				defer wg.Done()
				for range rounds {
					it, err := e.s.Get(e.ctx, ns("c"), "k")
					if err == nil && it == nil {
						err = errors.New("item vanished during concurrent puts")
					}
					if err == nil {
						err = consistent(it.Value)
					}
					if err != nil {
						errs <- err
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		if err := consistent(e.mustGet(ns("c"), "k").Value); err != nil {
			t.Fatal(err)
		}
		final := map[string]any{"w": 3, "i": 999, "payload": payload(3)}
		e.put(ns("c"), "k", final)
		equalValue(t, "after the last put", e.mustGet(ns("c"), "k").Value, final)
		if got := e.search(ns("c"), store.SearchOptions{}); len(got) != 1 {
			t.Fatalf("concurrent puts to one key left %d items", len(got))
		}
	})
	t.Run("ManyKeys", func(t *testing.T) {
		e := r.plain(t)
		var wg sync.WaitGroup
		errs := make(chan error, writers*rounds)
		for w := range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range rounds {
					k := fmt.Sprintf("w%d-%d", w, i)
					if err := e.s.Put(e.ctx, ns("c", fmt.Sprint(w)), k, map[string]any{"w": w, "payload": payload(w)}); err != nil {
						errs <- err
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		got := e.search(ns("c"), store.SearchOptions{Limit: writers * rounds * 2})
		if len(got) != writers*rounds {
			t.Fatalf("found %d items, want %d", len(got), writers*rounds)
		}
		for _, it := range got {
			if err := consistent(it.Value); err != nil {
				t.Fatal(err)
			}
		}
	})
	t.Run("ConcurrentBatches", func(t *testing.T) {
		e := r.plain(t)
		var wg sync.WaitGroup
		errs := make(chan error, writers)
		for w := range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range rounds {
					_, err := e.s.Batch(e.ctx, []store.Op{
						store.PutOp{Namespace: ns("b"), Key: "shared", Value: map[string]any{"w": w, "payload": payload(w)}},
						store.GetOp{Namespace: ns("b"), Key: "shared"},
						store.PutOp{Namespace: ns("b"), Key: fmt.Sprintf("own%d", w), Value: map[string]any{"w": w, "i": i, "payload": payload(w)}},
						store.SearchOp{Prefix: ns("b"), Options: store.SearchOptions{Limit: 3}},
					})
					if err != nil {
						errs <- err
						return
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		if got := e.search(ns("b"), store.SearchOptions{Limit: 100}); len(got) != writers+1 {
			t.Fatalf("found %d items, want %d", len(got), writers+1)
		}
		for w := range writers {
			it := e.mustGet(ns("b"), fmt.Sprintf("own%d", w))
			if i, _ := toInt(it.Value["i"]); i != rounds-1 {
				t.Fatalf("own%d: i = %v, want %d", w, it.Value["i"], rounds-1)
			}
		}
	})
}

func toInt(v any) (int, bool) {
	switch x := v.(type) {
	case int:
		return x, true
	case int64:
		return int(x), true
	case float64:
		return int(x), x == math.Trunc(x)
	case interface{ Int64() (int64, error) }:
		i, err := x.Int64()
		return int(i), err == nil
	}
	return 0, false
}

func (r *runner) testLifecycle(t *testing.T) {
	t.Run("CloseThenUse", func(t *testing.T) {
		e := r.withTTL(t, store.TTLConfig{SweepInterval: 10 * 1e6})
		c, ok := e.s.(io.Closer)
		if !ok {
			t.Skip("store does not implement io.Closer")
		}
		e.put(ns("a"), "k", map[string]any{})
		if err := c.Close(); err != nil {
			t.Fatalf("Close: %v", err)
		}
		ctx := context.Background()
		if _, err := e.s.Get(ctx, ns("a"), "k"); !errors.Is(err, store.ErrClosed) {
			t.Fatalf("Get after Close = %v, want ErrClosed", err)
		}
		if err := e.s.Put(ctx, ns("a"), "k", map[string]any{}); !errors.Is(err, store.ErrClosed) {
			t.Fatalf("Put after Close = %v, want ErrClosed", err)
		}
		if _, err := e.s.Search(ctx, nil, store.SearchOptions{}); !errors.Is(err, store.ErrClosed) {
			t.Fatalf("Search after Close = %v, want ErrClosed", err)
		}
		// The suite's cleanup closes the store a second time.
	})
}
