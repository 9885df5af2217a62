package items

import (
	"math"
	"testing"
	"time"

	"github.com/memvault/memvault/store"
	"github.com/memvault/memvault/store/internal/filtering"
)

func TestTTLMinutes(t *testing.T) {
	cases := map[time.Duration]int{
		0: 0, -time.Minute: 0, time.Second: 1, 30 * time.Second: 1, 89 * time.Second: 1,
		90 * time.Second: 2, 150 * time.Second: 2, 10 * time.Minute: 10, 24 * time.Hour: 1440,
	}
	for d, want := range cases {
		if got := TTLMinutes(d); got != want {
			t.Errorf("TTLMinutes(%v) = %d, want %d", d, got, want)
		}
	}
}

func TestResolveTTL(t *testing.T) {
	m := time.Minute
	neg := -m
	zero := time.Duration(0)
	cfg := &store.TTLConfig{DefaultTTL: 5 * m}
	if d, err := ResolveTTL(cfg, nil); err != nil || d != 5*m {
		t.Errorf("default = %v, %v", d, err)
	}
	if d, err := ResolveTTL(cfg, &zero); err != nil || d != 0 {
		t.Errorf("explicit 0 = %v, %v", d, err)
	}
	if d, err := ResolveTTL(nil, nil); err != nil || d != 0 {
		t.Errorf("no config = %v, %v", d, err)
	}
	if _, err := ResolveTTL(nil, &m); err == nil {
		t.Error("store.TTL without config accepted")
	}
	if _, err := ResolveTTL(cfg, &neg); err == nil {
		t.Error("negative store.TTL accepted")
	}
	if got := (store.TTLConfig{}).SweepEvery(); got != store.DefaultSweepInterval {
		t.Errorf("SweepEvery default = %v", got)
	}
	if got := (store.TTLConfig{SweepInterval: -1}).SweepEvery(); got != 0 {
		t.Errorf("SweepEvery disabled = %v", got)
	}
	now := time.Unix(100, 0)
	if Expired(time.Time{}, now) || Expired(now.Add(time.Second), now) || !Expired(now, now) {
		t.Error("Expired boundaries wrong")
	}
}

func TestListNamespacesHelper(t *testing.T) {
	all := []store.Namespace{{"a", "b"}, {"a", "c"}, {"b"}, {"a", "b", "c"}}
	got := ListNamespaces(all, store.ListNamespacesOptions{Prefix: store.Namespace{"a"}, MaxDepth: 2, Limit: 1, Offset: 1})
	if len(got) != 1 || got[0].String() != "a.c" {
		t.Fatalf("got %v", got)
	}
	opt := store.ListNamespacesOptions{Suffix: store.Namespace{"*", "c"}}
	if !opt.Matches(store.Namespace{"a", "b", "c"}) || opt.Matches(store.Namespace{"c"}) {
		t.Fatal("suffix wildcard match wrong")
	}
}

func TestCloneValue(t *testing.T) {
	in := map[string]any{"l": []any{map[string]any{"x": 1}}, "typed": []int{1, 2}}
	out, err := CloneValue(in)
	if err != nil {
		t.Fatal(err)
	}
	out["l"].([]any)[0].(map[string]any)["x"] = 2
	if in["l"].([]any)[0].(map[string]any)["x"] != 1 {
		t.Fatal("clone shares memory with its source")
	}
	if !filtering.JSONEqual(out["typed"], []any{1, 2}) {
		t.Fatalf("typed slice cloned as %v", out["typed"])
	}
	if _, err := CloneValue(map[string]any{"f": math.Inf(1)}); err == nil {
		t.Fatal("infinity accepted")
	}
	if _, err := CloneValue(map[string]any{"f": func() {}}); err == nil {
		t.Fatal("func accepted")
	}
}
