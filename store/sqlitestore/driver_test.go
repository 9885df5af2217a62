package sqlitestore

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/memvault/memvault/store"
)

// TestWriteWithoutIndexKeepsCodes: a store opened without an index on a
// file whose items have codes (another process's store has an index)
// deletes an item: the engine drives no code index then, and the driver
// must still bump the generation, log the item and take it out of the
// codes' coverage in the same transaction, so that the indexed process's
// next search refreshes from the log instead of serving a stale index or
// reloading every code.
func TestWriteWithoutIndexKeepsCodes(t *testing.T) {
	codeIndexOnly(t)
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "mixed.db")
	idx := &store.IndexConfig{Embedder: vecEmbedder{16}, Fields: []string{"text"}}
	indexed := openStore(t, path, Options{Index: idx})
	defer indexed.Close()
	var ops []store.Op
	for i := range 50 {
		ops = append(ops, store.PutOp{Namespace: store.Namespace{"u"}, Key: fmt.Sprint(i), Value: map[string]any{"text": fmt.Sprint("t", i)}})
	}
	if _, err := indexed.Batch(ctx, ops); err != nil {
		t.Fatal(err)
	}
	search := func() []store.SearchItem {
		t.Helper()
		res, err := indexed.Search(ctx, store.Namespace{"u"}, store.SearchOptions{Query: "t7", Limit: 50})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	if got := len(search()); got != 50 {
		t.Fatalf("found %d items, want 50", got)
	}
	plain := openStore(t, path, Options{})
	defer plain.Close()
	if err := plain.Delete(ctx, store.Namespace{"u"}, "7"); err != nil {
		t.Fatal(err)
	}
	incr := indexed.cache.Stats.Incremental.Load()
	if got := len(search()); got != 49 {
		t.Fatalf("found %d items after the delete, want 49", got)
	}
	if indexed.cache.Stats.Incremental.Load() != incr+1 {
		t.Errorf("the indexed store did not refresh its index from the log after another store's delete")
	}
	err := plain.db.Read(ctx, func(tx *sql.Tx) error {
		var n, sum sql.NullInt64
		if err := tx.QueryRowContext(ctx, `SELECT code_items, code_sum FROM store_vector_quant`).Scan(&n, &sum); err != nil {
			return err
		}
		real, err := codedItems(ctx, tx)
		if stored := scanCoverage(n, sum); err == nil && (!stored.Known || stored.Cov != real) {
			t.Errorf("stored coverage %+v, counted %+v", stored, real)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestVectorsCarryTheRowsUpdatedAt: a replace within one clock tick moves
// the item's updated_at past the replaced row's (the replace rule in the
// upsert), and the item's vectors and codes carry the updated_at stored,
// not the engine's clock: the code index and the exact ranking order ties
// by it, and must agree with the item. The statements that write them
// read it from the item's row.
func TestVectorsCarryTheRowsUpdatedAt(t *testing.T) {
	ctx := context.Background()
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	idx := &store.IndexConfig{Embedder: vecEmbedder{16}, Fields: []string{"text", "title"}}
	s := openStore(t, filepath.Join(t.TempDir(), "ticks.db"), Options{Index: idx, Now: func() time.Time { return at }})
	defer s.Close()
	ns := store.Namespace{"u"}
	for i := range 3 {
		if err := s.Put(ctx, ns, "k", map[string]any{"text": fmt.Sprint("t", i), "title": "x"}); err != nil {
			t.Fatal(err)
		}
	}
	var item int64
	if err := s.db.Writer().QueryRowContext(ctx, `SELECT updated_at FROM store WHERE prefix = 'u' AND key = 'k'`).Scan(&item); err != nil {
		t.Fatal(err)
	}
	if want := at.UnixNano() + 2; item != want {
		t.Fatalf("item's updated_at after three puts in one tick = %d, want %d", item, want)
	}
	for _, table := range []string{"store_vectors", "store_vector_codes"} {
		var n, other int
		if err := s.db.Writer().QueryRowContext(ctx, `SELECT count(*), count(*) FILTER (WHERE updated_at <> ?) FROM `+table+`
			WHERE prefix = 'u' AND key = 'k'`, item).Scan(&n, &other); err != nil {
			t.Fatal(err)
		}
		if n != 2 || other != 0 {
			t.Fatalf("%s: %d rows of the item, %d not at its updated_at %d; want 2, 0", table, n, other, item)
		}
	}
}
