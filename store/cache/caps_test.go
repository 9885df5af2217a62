package cache_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/memvault/memvault/store"
	"github.com/memvault/memvault/store/cache"
	"github.com/memvault/memvault/store/memstore"
)

// TestCapsFollowInner: the cache offers an optional interface exactly when
// its inner store does, so that a caller's type assertion (store.Update's
// for ConditionalPutter, an erasure's for PrefixDeleter) tells the truth
// instead of finding a method that can only fail.
func TestCapsFollowInner(t *testing.T) {
	inner, err := memstore.New(memstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer inner.Close()
	full, err := cache.New(inner, cache.Options{})
	if err != nil {
		t.Fatal(err)
	}
	bare, err := cache.New(plain{inner}, cache.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		has  func(any) bool
	}{
		{"Lister", func(v any) bool { _, ok := v.(store.Lister); return ok }},
		{"PrefixDeleter", func(v any) bool { _, ok := v.(store.PrefixDeleter); return ok }},
		{"ConditionalPutter", func(v any) bool { _, ok := v.(store.ConditionalPutter); return ok }},
		{"Sweeper", func(v any) bool { _, ok := v.(store.Sweeper); return ok }},
	} {
		if !c.has(any(full)) {
			t.Errorf("cache of a memory store is not a store.%s", c.name)
		}
		if c.has(any(bare)) {
			t.Errorf("cache of a store without %s claims to be a store.%s", c.name, c.name)
		}
	}
}

// TestCapsGenerated fails when caps_gen.go is not what gencaps.go writes
// today (a capability added to gencaps.go without `go generate`).
func TestCapsGenerated(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the generator with go run")
	}
	// Not named *.go: go run would take it for a source file.
	out := filepath.Join(t.TempDir(), "caps_gen.out")
	if b, err := exec.Command("go", "run", "gencaps.go", out).CombinedOutput(); err != nil {
		t.Fatalf("go run gencaps.go: %v\n%s", err, b)
	}
	want, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile("caps_gen.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatal("caps_gen.go differs from what gencaps.go writes: run go generate ./store/cache/")
	}
}
