package spaces_test

import (
	"context"
	"fmt"
	"slices"

	"github.com/memvault/memvault/crypto"
	"github.com/memvault/memvault/keys"
	"github.com/memvault/memvault/keys/memkeys"
	"github.com/memvault/memvault/serde"
	"github.com/memvault/memvault/store"
	"github.com/memvault/memvault/store/internal/spaces"
)

func dot(a, b []float32) float64 {
	var s float64
	for i := range a {
		s += float64(a[i]) * float64(b[i])
	}
	return s
}

// The store core rotates a subject's vectors as they are written and
// compares a search's query with them in the subject's space: scores are
// unchanged, the stored vector is not the embedder's, and once the
// subject's keys are destroyed its space has no query at all.
func Example() {
	ctx := context.Background()
	master, err := crypto.ParseKey("0123456789abcdef0123456789abcdef")
	if err != nil {
		fmt.Println(err)
		return
	}
	ring, err := crypto.NewKeyring(master)
	if err != nil {
		fmt.Println(err)
		return
	}
	enc, err := serde.NewEncrypted(nil, ring)
	if err != nil {
		fmt.Println(err)
		return
	}
	h, err := keys.New(keys.Options{Master: enc, Table: memkeys.New(),
		Subjects: keys.Subjects{NamespacePrefix: []string{"users"}}})
	if err != nil {
		fmt.Println(err)
		return
	}
	sp := spaces.Of(h, 4)
	fmt.Println(sp.Suffix())

	const ns = "users.carol.memories" // as stored
	embedded := []float32{0.5, 0.5, 0.5, 0.5}
	stored := [][]float32{slices.Clone(embedded)}
	if err := sp.Rotate(ctx, ns, stored); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("stored as embedded:", slices.Equal(stored[0], embedded))

	query := []float32{1, 0, 0, 0}
	q := sp.NewQuery(query)
	inSpace, err := q.For(ctx, ns)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("score %.4f, before rotation %.4f\n", dot(inSpace, stored[0]), dot(query, embedded))

	// A search under ("users") may meet several subjects' spaces; one
	// under ("users", "carol") meets one.
	_, single, _ := q.Single(ctx, store.Namespace{"users"})
	fmt.Println("one space under users:", single)
	_, single, _ = q.Single(ctx, store.Namespace{"users", "carol"})
	fmt.Println("one space under users.carol:", single)

	if _, err := h.DestroyKeys(ctx, "carol"); err != nil {
		fmt.Println(err)
		return
	}
	gone, err := spaces.Of(h, 4).NewQuery(query).For(ctx, ns)
	fmt.Println("query after erasure:", gone == nil, err)
	// Output:
	// +subjects:users
	// stored as embedded: false
	// score 0.5000, before rotation 0.5000
	// one space under users: false
	// one space under users.carol: true
	// query after erasure: true <nil>
}
