package storetest

import (
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/memvault/memvault/jsonvalue"
	"github.com/memvault/memvault/jsonvalue/jsonvaluetest"
	"github.com/memvault/memvault/store"
)

// testFidelity holds every backend to the JSON value model: a value comes
// back from Get, Search and Batch with the Go type and value the model
// gives it (jsonvalue.Canonical), whatever the backend and whether it
// encrypts, compared strictly (int64 is not float64, 5.0 is not 5).
func (r *runner) testFidelity(t *testing.T) {
	for _, c := range jsonvaluetest.Cases() {
		t.Run(c.Name, func(t *testing.T) {
			e := r.plain(t)
			e.put(ns("fid"), "k", map[string]any{"v": c.In})
			want := map[string]any{"v": c.Want}
			strictValue(t, "get", e.mustGet(ns("fid"), "k").Value, want)
			got := e.search(ns("fid"), store.SearchOptions{})
			if len(got) != 1 {
				t.Fatalf("search found %d items", len(got))
			}
			strictValue(t, "search", got[0].Value, want)
		})
	}
	t.Run("all_in_one_batch", func(t *testing.T) {
		e := r.plain(t)
		in, want := jsonvaluetest.All()
		in2, _ := jsonvaluetest.All()
		_, err := e.s.Batch(e.ctx, []store.Op{
			store.PutOp{Namespace: ns("fid"), Key: "a", Value: in},
			store.PutOp{Namespace: ns("fid"), Key: "b", Value: map[string]any{"nested": in2}},
		})
		if err != nil {
			t.Fatal(err)
		}
		res, err := e.s.Batch(e.ctx, []store.Op{store.GetOp{Namespace: ns("fid"), Key: "a"}})
		if err != nil {
			t.Fatal(err)
		}
		if res[0].Item == nil {
			t.Fatal("batch get found nothing")
		}
		strictValue(t, "batch get", res[0].Item.Value, want)
		strictValue(t, "get", e.mustGet(ns("fid"), "b").Value, map[string]any{"nested": want})
	})
	t.Run("refused_values_lose_nothing", func(t *testing.T) {
		e := r.plain(t)
		e.put(ns("fid"), "k", map[string]any{"v": int64(1)})
		for name, bad := range map[string]any{
			"nan": math.NaN(), "inf": math.Inf(1), "bad_utf8": "a\xffb",
			"bad_utf8_key": map[string]any{"\xfe": 1}, "bad_number": json.Number("1.2.3"),
			"channel": make(chan int),
		} {
			err := e.s.Put(e.ctx, ns("fid"), "k", map[string]any{"v": bad})
			if !errors.Is(err, store.ErrInvalidArgument) {
				t.Errorf("put %s: error %v, want store.ErrInvalidArgument", name, err)
			}
		}
		// The numbers every checkpoint saver refuses too ("1e400", hex,
		// leading zeros, ...), nested: refused, and never quoted.
		for name, bad := range jsonvaluetest.RefusedNumbers() {
			err := e.s.Put(e.ctx, ns("fid"), "k", map[string]any{"v": []any{int64(1), map[string]any{"n": bad}}})
			if !errors.Is(err, store.ErrInvalidArgument) {
				t.Errorf("put number %s: error %v, want store.ErrInvalidArgument", name, err)
			} else if strings.Contains(err.Error(), jsonvaluetest.SecretDigits) {
				t.Errorf("put number %s: error shows the number: %v", name, err)
			}
		}
		strictValue(t, "get after refused puts", e.mustGet(ns("fid"), "k").Value, map[string]any{"v": int64(1)})
	})
}

func strictValue(t testing.TB, what string, got, want map[string]any) {
	t.Helper()
	if d := jsonvalue.Diff(want, got); d != "" {
		t.Fatalf("%s: %s", what, d)
	}
}
