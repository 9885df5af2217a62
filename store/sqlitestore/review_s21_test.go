package sqlitestore

import (
	"context"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/memvault/memvault/store"
)

// TestRecallAfterWritesRacingSearches (review, session 21): another store
// on the file (another process's connections) updates items' vectors,
// deletes and puts them back while this store searches; once the writer
// stops, this store's searches, and a fresh store's, equal the exact
// scan's (recall 1.0), and an updated item is found by its new vector.
func TestRecallAfterWritesRacingSearches(t *testing.T) {
	ctx := context.Background()
	f := newSnapFixture(t)
	w := f.open()
	done := make(chan error, 1)
	go func() {
		rng := rand.New(rand.NewPCG(1, 2))
		for round := range 120 {
			var ops []store.Op
			for range 8 {
				i := rng.IntN(snapItems)
				switch rng.IntN(3) {
				case 0: // a new vector
					ops = append(ops, store.PutOp{Namespace: snapNS(i), Key: fmt.Sprint(i), Value: map[string]any{"a": fmt.Sprint("v", rng.IntN(snapItems))}})
				case 1:
					ops = append(ops, store.PutOp{Namespace: snapNS(i), Key: fmt.Sprint(i)}) // delete
				default:
					ops = append(ops, store.PutOp{Namespace: snapNS(i), Key: fmt.Sprint(i), Value: map[string]any{"a": fmt.Sprint("v", i)}})
				}
			}
			if _, err := w.Batch(ctx, ops); err != nil {
				done <- fmt.Errorf("round %d: %w", round, err)
				return
			}
		}
		done <- nil
	}()
	searching := true
	for n := 0; searching; n++ {
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
			searching = false
		default:
			if _, err := f.s.Search(ctx, nil, store.SearchOptions{Query: fmt.Sprint("v", n%snapItems), Limit: 10}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := w.Put(ctx, snapNS(5), "5", map[string]any{"a": "v399"}); err != nil {
		t.Fatal(err)
	}
	f.same(f.s, "the store that searched during the writes")
	f.finds(f.s, snapNS(5), "5", 399, "the store that searched during the writes")
	fresh := f.open()
	f.same(fresh, "a store opened after the writes")
}

// TestHostileSnapshotRowsRebuilt (review, session 21; holds): snapshot
// rows damaged through SQL — truncated, a header claiming other
// dimensions, an item claiming 2^62 codes, a byte of a key flipped, a part
// of middle parts dropped — neither panic nor trust the snapshot: a fresh
// store's searches equal the exact scan's and find item 42.
func TestHostileSnapshotRowsRebuilt(t *testing.T) {
	huge := binary.AppendUvarint(nil, 1<<62)
	for name, q := range map[string]string{
		"truncated":          `UPDATE store_vector_snapshot SET data = substr(data, 1, length(data) / 2) WHERE part = 0`,
		"other dimensions":   `UPDATE store_vector_snapshot SET data = X'` + fmt.Sprintf("%x", snapshotMagic) + `FF01' || substr(data, 8) WHERE part = 0`,
		"huge count":         `UPDATE store_vector_snapshot SET data = substr(data, 1, 40) || X'` + fmt.Sprintf("%x", huge) + `' || substr(data, 41) WHERE part = 0`,
		"key byte flipped":   `UPDATE store_vector_snapshot SET data = substr(data, 1, 12) || X'7E' || substr(data, 14) WHERE part = 0`,
		"middle part gone":   `DELETE FROM store_vector_snapshot WHERE part = (SELECT max(part) FROM store_vector_snapshot)`,
		"every part doubled": `INSERT INTO store_vector_snapshot (part, data) SELECT part + 1000, data FROM store_vector_snapshot`,
	} {
		t.Run(name, func(t *testing.T) {
			f := newSnapFixture(t)
			f.raw(q)
			fresh := f.open()
			f.finds(fresh, snapNS(42), "42", 42, name)
			f.same(fresh, name)
		})
	}
}
