package redisstore

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/memvault/memvault/backends/redis/redistest"
	"github.com/memvault/memvault/embeddings"
	"github.com/memvault/memvault/store"
	"github.com/memvault/memvault/store/engine"
)

// TestNearestFiltersByPrefix: VSIM's FILTER on the prefix tags keeps the
// candidates of a search under a namespace inside it, so that q.N
// candidates under the prefix come back in one query (without it the
// nearest elements of other namespaces take the places, and the engine
// must widen or rank exactly).
func TestNearestFiltersByPrefix(t *testing.T) {
	ctx := context.Background()
	emb := embeddings.NewUnkeyedHashing(32)
	s, err := New(ctx, redistest.Shared(t, 8).Client(t), Options{Prefix: redistest.Prefix(),
		Index: &store.IndexConfig{Embedder: emb, Fields: []string{"text"}}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for i := range 40 {
		// One namespace in ten is under users.u0; the query's text is in
		// every other namespace's items.
		ns, text := store.Namespace{"users", "u1"}, "apple pie"
		if i%10 == 0 {
			ns, text = store.Namespace{"users", "u0"}, fmt.Sprint("banana ", i)
		}
		if err := s.Put(ctx, ns, fmt.Sprint("k", i), map[string]any{"text": text}); err != nil {
			t.Fatal(err)
		}
	}
	tx, err := s.d.Begin(ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	q, _ := emb.EmbedQuery(ctx, "apple pie")
	cands, got, err := tx.(engine.ANNTx).Nearest(ctx, engine.ANNQuery{Prefix: store.Namespace{"users", "u0"}, Vector: q, N: 4, Now: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	if got != 4 || len(cands) != 4 {
		t.Fatalf("Nearest under users.u0, N=4: got %d, %d candidates under the prefix; want 4 and 4", got, len(cands))
	}
	for _, c := range cands {
		if c.Key.NS != "users.u0" || c.Row == nil {
			t.Fatalf("candidate %v (row %v) is not a live item under users.u0", c.Key, c.Row != nil)
		}
	}
}
