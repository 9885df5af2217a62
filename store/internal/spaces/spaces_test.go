package spaces_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/memvault/memvault/memvaulttest/testkeys"
	"github.com/memvault/memvault/store"
	"github.com/memvault/memvault/store/internal/spaces"
)

// TestSpacesFollowSubjects: a namespace's space is the subject keys.Subjects
// gives its values; a search prefix meets one space when it lies under a
// subject's namespace or apart from every subject's, several otherwise;
// vectors of a subject are rotated into its space (so that the query
// rotated alike scores them as before), others left alone.
func TestSpacesFollowSubjects(t *testing.T) {
	ctx := context.Background()
	h := testkeys.Subjects(t) // subjects: ("users", <subject>, …)
	// 64 dimensions, not 4: the rotation of a subject comes from its
	// random data key, and at 4 dimensions its rounds of signed
	// permutations and Hadamard transforms left [1 2 3 4] where it was
	// about once in 500 keys (6 failures in 3 000 runs), failing the
	// check that a subject's vectors are rotated.
	const dims = 64
	sp := spaces.Of(h, dims)
	if sp == nil || sp.Suffix() != "+subjects:users" {
		t.Fatalf("spaces of a hierarchy: %v", sp)
	}
	if spaces.Of(testkeys.Encrypting(t), dims) != nil {
		t.Fatal("a serializer without subjects has spaces")
	}
	var none *spaces.Spaces
	if none.Suffix() != "" {
		t.Fatal("one shared space has a suffix")
	}
	base := make([]float32, dims)
	for i := range base {
		base[i] = float32(i + 1)
	}
	for _, ns := range []string{"users", "users.carol", "users.carol.notes", "userscarol", "other.users.x", "u", "users.dave.x.y"} {
		q := sp.NewQuery(base)
		got := q.Subject(ns)
		want := h.Subjects().NamespaceSubject(ns)
		if got != want {
			t.Errorf("space of %q: %q, its values' subject %q", ns, got, want)
		}
		vecs := [][]float32{slices.Clone(base)}
		if err := sp.Rotate(ctx, ns, vecs); err != nil {
			t.Fatal(err)
		}
		qv, err := q.For(ctx, ns)
		if err != nil {
			t.Fatal(err)
		}
		if rotated := !slices.Equal(vecs[0], base); rotated != (want != "") || !slices.Equal(qv, vecs[0]) {
			t.Errorf("%q: vector %v, query %v", ns, vecs[0], qv)
		}
	}
	for _, c := range []struct {
		prefix store.Namespace
		single bool
		space  string
	}{
		{nil, false, ""},
		{store.Namespace{"users"}, false, ""},
		{store.Namespace{"users", "carol"}, true, "carol"},
		{store.Namespace{"users", "carol", "notes"}, true, "carol"},
		{store.Namespace{"other"}, true, ""},
		{store.Namespace{"other", "users"}, true, ""},
	} {
		q := sp.NewQuery(base)
		vec, single, err := q.Single(ctx, c.prefix)
		if err != nil || single != c.single {
			t.Fatalf("%v: single %v, %v", c.prefix, single, err)
		}
		if want, _ := q.Vector(ctx, c.space); single && !slices.Equal(vec, want) {
			t.Errorf("%v: query %v, want %s's %v", c.prefix, vec, c.space, want)
		}
	}
	// A subject whose keys are gone has no space: nothing of it scores.
	if _, err := h.DestroyKeys(ctx, "carol"); err != nil {
		t.Fatal(err)
	}
	q := sp.NewQuery(base)
	if vec, single, err := q.Single(ctx, store.Namespace{"users", "carol"}); vec != nil || !single || err != nil {
		t.Fatalf("carol's space after the erasure: %v %v %v", vec, single, err)
	}
	per := spaces.NewPerSpace(q, func(v []float32) string { return fmt.Sprint(v) })
	if _, ok, known := per.Lookup("users.carol"); known || ok {
		t.Fatal("Lookup knows a namespace Resolve has not met")
	}
	if _, ok, err := per.Resolve(ctx, "users.carol.x"); ok || err != nil {
		t.Fatalf("carol's space resolves: %v %v", ok, err)
	}
	if v, ok, err := per.ResolveBytes(ctx, []byte("kb")); !ok || err != nil || v != fmt.Sprint(base) {
		t.Fatalf("the shared space resolves to %v %v %v", v, ok, err)
	}
	if _, ok, known := per.Lookup("users.carol.x"); !known || ok {
		t.Fatal("Lookup forgot what Resolve met")
	}
}
