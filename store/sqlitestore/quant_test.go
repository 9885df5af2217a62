package sqlitestore

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/memvault/memvault/store/vecindex"

	"github.com/memvault/memvault/embeddings"
	"github.com/memvault/memvault/store"
	"github.com/memvault/memvault/store/storetest"
)

// scaledEmbedder is the benchmark's clustered vectors, with norms varying
// by item so that the three distances rank differently.
type scaledEmbedder struct{ *clustered }

func (e scaledEmbedder) scale(t string, v []float32) []float32 {
	n, _ := strconv.Atoi(t[1:])
	f := 0.5 + float32(n%7)/4
	for i := range v {
		v[i] *= f
	}
	return v
}

func (e scaledEmbedder) EmbedDocuments(ctx context.Context, texts []string) ([][]float32, error) {
	out, _ := e.clustered.EmbedDocuments(ctx, texts)
	for i, t := range texts {
		e.scale(t, out[i])
	}
	return out, nil
}

func (e scaledEmbedder) EmbedQuery(ctx context.Context, text string) ([]float32, error) {
	v, _ := e.clustered.EmbedQuery(ctx, text)
	return e.scale(text, v), nil
}

// results renders a search's items with their exact scores.
func results(t *testing.T, s *Store, prefix store.Namespace, opt store.SearchOptions) string {
	t.Helper()
	res, err := s.Search(context.Background(), prefix, opt)
	if err != nil {
		t.Fatal(err)
	}
	var out string
	for _, it := range res {
		score := "nil"
		if it.Score != nil {
			score = strconv.FormatFloat(*it.Score, 'g', -1, 64)
		}
		out += fmt.Sprintf("%s/%s=%s ", it.Namespace, it.Key, score)
	}
	return out
}

// TestQuantizedSearchIsExact compares searches by the code index with the
// exact scan of SQLite (VectorCacheBytes < 0) on clustered vectors of two
// fields per item, under every distance, namespace prefix, several pages,
// across updates and deletes, and with another store on the file (a
// second process) writing: the results, scores included, must be equal,
// and the other store's writes must reach the index by reading the
// changed items' codes only.
func TestQuantizedSearchIsExact(t *testing.T) {
	codeIndexOnly(t)
	ctx := context.Background()
	const items, dims = 1500, 256
	for _, dist := range []store.Distance{store.Cosine, store.L2, store.InnerProduct} {
		t.Run(string(dist), func(t *testing.T) {
			emb := scaledEmbedder{newClustered(items, dims)}
			idx := &store.IndexConfig{Embedder: emb, Dims: dims, Fields: []string{"a", "b"}, Distance: dist}
			path := filepath.Join(t.TempDir(), "q.db")
			s := openStore(t, path, Options{Index: idx})
			defer s.Close()
			exact := openStore(t, path, Options{Index: idx, VectorCacheBytes: -1})
			defer exact.Close()
			other := openStore(t, path, Options{Index: idx})
			defer other.Close()

			put := func(w *Store, i int, v map[string]any) {
				t.Helper()
				ns := store.Namespace{"u", fmt.Sprint(i % 3), fmt.Sprint(i % 2)}
				if err := w.Put(ctx, ns, fmt.Sprint(i), v); err != nil {
					t.Fatal(err)
				}
			}
			value := func(i, j int) map[string]any {
				v := map[string]any{"a": fmt.Sprint("v", i)}
				if i%3 == 0 {
					v["b"] = fmt.Sprint("v", j)
				}
				return v
			}
			var ops []store.Op
			for i := range items {
				ops = append(ops, store.PutOp{Namespace: store.Namespace{"u", fmt.Sprint(i % 3), fmt.Sprint(i % 2)},
					Key: fmt.Sprint(i), Value: value(i, (i*7)%items)})
			}
			if _, err := s.Batch(ctx, ops[:700]); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Batch(ctx, ops[700:]); err != nil {
				t.Fatal(err)
			}
			var centre []byte
			if err := s.db.Reader().QueryRowContext(ctx, `SELECT centre FROM store_vector_quant`).Scan(&centre); err != nil || len(centre) != 4*dims {
				t.Fatalf("no centre after %d items: %v", items, err)
			}

			r := rand.New(rand.NewPCG(3, 4))
			check := func(round int) {
				t.Helper()
				prefixes := []store.Namespace{nil, {"u"}, {"u", "1"}, {"u", "2", "0"}}
				for range 6 {
					opt := store.SearchOptions{Query: fmt.Sprint("q", r.IntN(1000)), Limit: 1 + r.IntN(12), Offset: r.IntN(3) * r.IntN(10)}
					p := prefixes[r.IntN(len(prefixes))]
					if got, want := results(t, s, p, opt), results(t, exact, p, opt); got != want {
						t.Fatalf("round %d, %v %+v: the index returned\n%s\nthe exact scan\n%s", round, p, opt, got, want)
					}
				}
			}
			check(0)
			if !s.cache.Loaded() {
				t.Fatal("the index is not loaded")
			}
			for round := 1; round <= 20; round++ {
				w := s
				if round%2 == 0 {
					w = other // another process writes
				}
				full, incr, rows := s.cache.Stats.FullLoads.Load(), s.cache.Stats.Incremental.Load(), s.cache.Stats.CodeRows.Load()
				var codeRows int64
				for range 5 {
					i := r.IntN(items)
					switch r.IntN(4) {
					case 0:
						if err := w.Delete(ctx, store.Namespace{"u", fmt.Sprint(i % 3), fmt.Sprint(i % 2)}, fmt.Sprint(i)); err != nil {
							t.Fatal(err)
						}
					case 1:
						put(w, i, map[string]any{"c": "no vector"})
					default:
						v := value(r.IntN(items), r.IntN(items))
						put(w, i, v)
						codeRows += int64(len(v))
					}
				}
				check(round)
				if w == other {
					if s.cache.Stats.FullLoads.Load() != full || s.cache.Stats.Incremental.Load() != incr+1 {
						t.Fatalf("round %d: another process's write of 5 items made %d full loads, %d refreshes from the log",
							round, s.cache.Stats.FullLoads.Load()-full, s.cache.Stats.Incremental.Load()-incr)
					}
					// Rewriting an item twice in a round can read fewer.
					if got := s.cache.Stats.CodeRows.Load() - rows; got > codeRows {
						t.Fatalf("round %d: the refresh read %d code rows, the writes wrote %d", round, got, codeRows)
					}
				} else if s.cache.Stats.CodeRows.Load() != rows {
					t.Fatalf("round %d: this process's own write read code rows", round)
				}
			}
		})
	}
}

// TestCodesAfterOlderBuild checks the codes' generation: items written by a
// build without codes (simulated by bumping the generation in SQL) make
// searches scan SQLite exactly, and the next Open recodes every vector.
func TestCodesAfterOlderBuild(t *testing.T) {
	codeIndexOnly(t)
	ctx := context.Background()
	emb := newClustered(300, 64)
	idx := &store.IndexConfig{Embedder: emb, Dims: 64, Fields: []string{"a"}}
	path := filepath.Join(t.TempDir(), "old.db")
	s := openStore(t, path, Options{Index: idx})
	for i := range 300 {
		if err := s.Put(ctx, store.Namespace{"n"}, fmt.Sprint(i), map[string]any{"a": fmt.Sprint("v", i)}); err != nil {
			t.Fatal(err)
		}
	}
	opt := store.SearchOptions{Query: "q1", Limit: 5}
	want := results(t, s, nil, opt)
	// An older build replaces item 0's vector without its code.
	if _, err := s.db.Writer().ExecContext(ctx, `UPDATE store_vectors SET embedding = ? WHERE key = '0';
		UPDATE store_generation SET gen = gen + 1`, encodeVector(emb.Query(1))); err != nil {
		t.Fatal(err)
	}
	got := results(t, s, nil, opt)
	if got == want || got[:len("n/0=")] != "n/0=" {
		t.Fatalf("after an older build's write the search returned\n%s\nnot item 0 first", got)
	}
	full := s.cache.Stats.FullLoads.Load()
	s.Close()
	s = openStore(t, path, Options{Index: idx})
	defer s.Close()
	if again := results(t, s, nil, opt); again != got {
		t.Fatalf("after recoding the search returned\n%s\nwant\n%s", again, got)
	}
	if s.cache.Stats.FullLoads.Load() != 1 || full != 1 {
		t.Fatalf("the reopened store did not search by its index (%d loads)", s.cache.Stats.FullLoads.Load())
	}
}

// TestIndexSnapshot checks that a store that read every code stores the
// index as a snapshot, that a store opened later loads it with the codes
// logged since (no row per vector), and that its searches equal the exact
// scan.
func TestIndexSnapshot(t *testing.T) {
	codeIndexOnly(t)
	defer func(n int) { vecindex.SnapshotMinCodes = n }(vecindex.SnapshotMinCodes)
	vecindex.SnapshotMinCodes = 100
	ctx := context.Background()
	emb := newClustered(400, 128)
	idx := &store.IndexConfig{Embedder: emb, Dims: 128, Fields: []string{"a"}}
	path := filepath.Join(t.TempDir(), "snap.db")
	s := openStore(t, path, Options{Index: idx})
	defer s.Close()
	for i := range 400 {
		if err := s.Put(ctx, store.Namespace{"n", fmt.Sprint(i % 4)}, fmt.Sprint(i), map[string]any{"a": fmt.Sprint("v", i)}); err != nil {
			t.Fatal(err)
		}
	}
	opt := store.SearchOptions{Query: "q3", Limit: 7}
	results(t, s, nil, opt) // loads every code, then stores the snapshot
	var snapGen int64
	if err := s.db.Reader().QueryRowContext(ctx, `SELECT snapshot_gen FROM store_vector_quant`).Scan(&snapGen); err != nil || snapGen < 0 {
		t.Fatalf("no snapshot stored: %d, %v", snapGen, err)
	}
	for i := range 5 { // logged after the snapshot
		if err := s.Put(ctx, store.Namespace{"n", "0"}, fmt.Sprint(i), map[string]any{"a": fmt.Sprint("v", 100+i)}); err != nil {
			t.Fatal(err)
		}
	}
	exact := openStore(t, path, Options{Index: idx, VectorCacheBytes: -1})
	defer exact.Close()
	later := openStore(t, path, Options{Index: idx})
	defer later.Close()
	for _, p := range []store.Namespace{nil, {"n", "0"}, {"n", "3"}} {
		if got, want := results(t, later, p, opt), results(t, exact, p, opt); got != want {
			t.Fatalf("%v: from the snapshot\n%s\nexact\n%s", p, got, want)
		}
	}
	if later.cache.Stats.Snapshots.Load() != 1 || later.cache.Stats.FullLoads.Load() != 0 || later.cache.Stats.CodeRows.Load() != 5 {
		t.Fatalf("the later store made %d snapshot loads, %d full loads, read %d code rows; want 1, 0, 5",
			later.cache.Stats.Snapshots.Load(), later.cache.Stats.FullLoads.Load(), later.cache.Stats.CodeRows.Load())
	}
}

// TestBadSnapshotLoadsEveryCode: a snapshot that cannot serve (its first
// part repeated after the last, so keys out of order and sign bits after
// the middle parts; a part of format 1,
// without header; the codes of other dimensions) is not loaded, even
// when its first part is sound: the store reads every code row, searches
// exactly, and stores a sound snapshot, which the next store loads.
func TestBadSnapshotLoadsEveryCode(t *testing.T) {
	codeIndexOnly(t)
	defer func(n int) { vecindex.SnapshotMinCodes = n }(vecindex.SnapshotMinCodes)
	vecindex.SnapshotMinCodes = 100
	ctx := context.Background()
	emb := newClustered(300, 128)
	idx := &store.IndexConfig{Embedder: emb, Dims: 128, Fields: []string{"a"}}
	opt := store.SearchOptions{Query: "q5", Limit: 6}
	for name, damage := range map[string]string{
		"repeated part":  `INSERT INTO store_vector_snapshot (part, data) SELECT (SELECT max(part) FROM store_vector_snapshot) + 1, data FROM store_vector_snapshot WHERE part = 0`,
		"format 1 part":  `UPDATE store_vector_snapshot SET data = substr(data, ` + fmt.Sprint(len(snapshotMagic)+3) + `)`,
		"other dims":     `UPDATE store_vector_snapshot SET data = CAST(? AS BLOB) || substr(data, ` + fmt.Sprint(len(snapshotMagic)+3) + `)`,
		"repeated twice": `INSERT INTO store_vector_snapshot (part, data) SELECT (SELECT max(part) FROM store_vector_snapshot) + n, data FROM store_vector_snapshot, (SELECT 1 AS n UNION SELECT 2) WHERE part = 0`,
	} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "snap.db")
			s := openStore(t, path, Options{Index: idx})
			defer s.Close()
			for i := range 300 {
				if err := s.Put(ctx, store.Namespace{"n", fmt.Sprint(i % 3)}, fmt.Sprint(i), map[string]any{"a": fmt.Sprint("v", i)}); err != nil {
					t.Fatal(err)
				}
			}
			results(t, s, nil, opt) // stores the snapshot
			var args []any
			if name == "other dims" {
				args = append(args, string(binary.AppendUvarint([]byte(snapshotMagic), 129)))
			}
			if n, err := s.db.Writer().ExecContext(ctx, damage, args...); err != nil {
				t.Fatal(err)
			} else if rows, _ := n.RowsAffected(); rows == 0 {
				t.Fatal("no snapshot to damage")
			}
			exact := openStore(t, path, Options{Index: idx, VectorCacheBytes: -1})
			defer exact.Close()
			for round := range 2 {
				later := openStore(t, path, Options{Index: idx})
				if got, want := results(t, later, nil, opt), results(t, exact, nil, opt); got != want {
					t.Fatalf("round %d: after the damage\n%s\nexact\n%s", round, got, want)
				}
				st := &later.cache.Stats
				if want := int64(1 - round); st.FullLoads.Load() != want || st.Snapshots.Load() != 1-want {
					t.Fatalf("round %d: %d full loads, %d snapshot loads; want %d, %d", round, st.FullLoads.Load(), st.Snapshots.Load(), want, 1-want)
				}
				if err := later.Close(); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

// TestSnapshotReaderStops: readParts stops reading when its caller stops
// taking parts or panics, and the transaction is the caller's again when
// it returns.
func TestSnapshotReaderStops(t *testing.T) {
	ctx := context.Background()
	s := openStore(t, filepath.Join(t.TempDir(), "parts.db"), Options{})
	defer s.Close()
	if _, err := s.db.Writer().ExecContext(ctx, `INSERT INTO store_vector_snapshot (part, data)
		WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 9) SELECT i, randomblob(100000) FROM n`); err != nil {
		t.Fatal(err)
	}
	for _, stopAt := range []int{1, 3, 10} {
		for _, panics := range []bool{false, true} {
			err := s.db.Read(ctx, func(tx *sql.Tx) error {
				seen := 0
				func() {
					defer func() {
						if r := recover(); r != nil && !panics {
							panic(r)
						}
					}()
					if err := readParts(ctx, tx, func(p []byte) bool {
						seen++
						if seen == stopAt && panics {
							panic("use failed")
						}
						return seen < stopAt
					}); err != nil {
						t.Fatal(err)
					}
				}()
				if seen != stopAt {
					t.Errorf("stop at %d (panics %v): use saw %d parts", stopAt, panics, seen)
				}
				var n int
				return tx.QueryRowContext(ctx, `SELECT count(*) FROM store_vector_snapshot`).Scan(&n)
			})
			if err != nil {
				t.Fatalf("stop at %d (panics %v): the transaction after: %v", stopAt, panics, err)
			}
		}
	}
}

// TestDeletionLeavesNoNameInTheIndex: the search index's snapshot and log
// hold namespaces, keys and codes. A delete drops the snapshot (its pages
// zeroed by secure_delete); after DeletePrefix (what an erasure runs) the
// database file holds the deleted namespace nowhere, the log included,
// while searches still equal the exact scan. (A plain delete's log row
// keeps the item's name until the log is trimmed, logKeep writes later.)
func TestDeletionLeavesNoNameInTheIndex(t *testing.T) {
	codeIndexOnly(t)
	defer func(n int) { vecindex.SnapshotMinCodes = n }(vecindex.SnapshotMinCodes)
	vecindex.SnapshotMinCodes = 100
	ctx := context.Background()
	emb := newClustered(400, 128)
	idx := &store.IndexConfig{Embedder: emb, Dims: 128, Fields: []string{"a"}}
	path := filepath.Join(t.TempDir(), "erase.db")
	s := openStore(t, path, Options{Index: idx})
	for i := range 400 {
		// The forgotten subject's name is not ASCII, and its items sit in
		// a sub-namespace: the purge must match bytes, not characters.
		ns := store.Namespace{"users", []string{"zqxälice", "bob", "carol", "dave"}[i%4]}
		if i%4 == 0 {
			ns = append(ns, "notes")
		}
		if err := s.Put(ctx, ns, fmt.Sprint("key", i), map[string]any{"a": fmt.Sprint("v", i)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Put(ctx, store.Namespace{"users", "bob"}, "zqxsecretkey", map[string]any{"a": "v1"}); err != nil {
		t.Fatal(err)
	}
	opt := store.SearchOptions{Query: "q3", Limit: 7}
	results(t, s, nil, opt) // loads every code, then stores the snapshot
	var snapGen int64
	if err := s.db.Reader().QueryRowContext(ctx, `SELECT snapshot_gen FROM store_vector_quant`).Scan(&snapGen); err != nil || snapGen < 0 {
		t.Fatalf("no snapshot stored: %d, %v", snapGen, err)
	}
	if _, err := s.DeletePrefix(ctx, store.Namespace{"users", "zqxälice"}); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(ctx, store.Namespace{"users", "bob"}, "zqxsecretkey"); err != nil {
		t.Fatal(err)
	}
	var parts int
	if err := s.db.Reader().QueryRowContext(ctx, `SELECT (SELECT snapshot_gen FROM store_vector_quant), (SELECT count(*) FROM store_vector_snapshot)`).Scan(&snapGen, &parts); err != nil || snapGen != -1 || parts != 0 {
		t.Fatalf("after deletes the snapshot is at generation %d with %d parts (%v); want none", snapGen, parts, err)
	}
	exact := openStore(t, path, Options{Index: idx, VectorCacheBytes: -1})
	later := openStore(t, path, Options{Index: idx})
	for _, p := range []store.Namespace{nil, {"users", "bob"}} {
		if got, want := results(t, later, p, opt), results(t, exact, p, opt); got != want {
			t.Fatalf("%v: index\n%s\nexact\n%s", p, got, want)
		}
	}
	for _, st := range []*Store{exact, later, s} {
		if err := st.Close(); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{path, path + "-wal"} {
		raw, err := os.ReadFile(f)
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(raw, []byte("zqxälice")) {
			t.Errorf("%s still holds the deleted namespace", filepath.Base(f))
		}
	}
}

// TestLooseBoundsFallBackToOneScan: 1-bit codes of low-dimension, sparse
// vectors (the offline hashing embedder at 64 dimensions, texts from a
// small vocabulary) bound scores loosely. A search then stops probing
// items one batch at a time after a tenth of them (at least 512) and ranks
// by one exact scan: its results are the exact scan's, and the items it
// probed stay within that budget plus one batch.
func TestLooseBoundsFallBackToOneScan(t *testing.T) {
	codeIndexOnly(t)
	ctx := context.Background()
	idx := &store.IndexConfig{Embedder: embeddings.NewUnkeyedHashing(64), Dims: 64, Fields: []string{"text"}}
	path := filepath.Join(t.TempDir(), "sparse.db")
	s := openStore(t, path, Options{Index: idx})
	defer s.Close()
	words := strings.Fields("invoice refund flight hotel password coffee allergy meeting email phone")
	const n = 6000
	var ops []store.Op
	for i := range n {
		text := fmt.Sprintf("%s %s %s", words[i%10], words[(i/10)%10], words[(i/100)%10])
		ops = append(ops, store.PutOp{Namespace: store.Namespace{"u", fmt.Sprint(i % 7)}, Key: fmt.Sprint(i), Value: map[string]any{"text": text}})
	}
	if _, err := s.Batch(ctx, ops); err != nil {
		t.Fatal(err)
	}
	exact := openStore(t, path, Options{Index: idx, VectorCacheBytes: -1})
	defer exact.Close()
	for _, q := range []string{"coffee allergy", "hotel flight refund", "password"} {
		opt := store.SearchOptions{Query: q, Limit: 10}
		r0 := s.cache.Stats.Rescored.Load()
		if got, want := results(t, s, store.Namespace{"u"}, opt), results(t, exact, store.Namespace{"u"}, opt); got != want {
			t.Fatalf("%q: index\n%s\nexact\n%s", q, got, want)
		}
		if probed := s.cache.Stats.Rescored.Load() - r0; probed > max(512, n/10)+vecindex.RescoreBatch {
			t.Errorf("%q probed %d items one batch at a time; the budget is %d", q, probed, max(512, n/10))
		}
	}
}

// snapshotMagic begins each snapshot part (vecindex's format, which the
// tests damage through SQL).
const snapshotMagic = "mvcs5"

// codeIndexOnly turns the exact in-process copy of small stores off for
// the test, so that its searches go through the code index.
func codeIndexOnly(t testing.TB) {
	defer func(n int64) { t.Cleanup(func() { floatBudget = n }) }(floatBudget)
	floatBudget = 0
}

// TestQuantizedSearchWithFilterAndTTLIsExact: a filter keeping one item in
// ten, and expired items, drop rescored items from the page; the items
// past the certain top must then come in exact order, as the exact scan
// ranks them (the index once returned the rest of its rescored items
// first and skipped better ones it had not read).
func TestQuantizedSearchWithFilterAndTTLIsExact(t *testing.T) {
	codeIndexOnly(t)
	ctx := context.Background()
	const items, dims = 3000, 256
	g := newClustered(items, dims)
	clock := storetest.NewClock()
	ttl := &store.TTLConfig{SweepInterval: -1, DisableRefreshOnRead: true}
	path := filepath.Join(t.TempDir(), "f.db")
	s := openStore(t, path, Options{Index: g.index(), TTL: ttl, Now: clock.Now})
	defer s.Close()
	exact := openStore(t, path, Options{Index: g.index(), TTL: ttl, Now: clock.Now, VectorCacheBytes: -1})
	defer exact.Close()
	var ops []store.Op
	for i := range items {
		op := store.PutOp{Namespace: store.Namespace{"u", fmt.Sprint(i % 3)}, Key: fmt.Sprint(i),
			Value: map[string]any{"text": fmt.Sprint("v", i), "keep": i%10 == 0}}
		if i%7 == 0 {
			minute := time.Minute
			op.Options.TTL = &minute
		}
		ops = append(ops, op)
	}
	if _, err := s.Batch(ctx, ops); err != nil {
		t.Fatal(err)
	}
	clock.Advance(2 * time.Minute) // every seventh item expires
	for j := range 40 {
		for _, opt := range []store.SearchOptions{
			{Query: fmt.Sprint("q", j), Limit: 10, Filter: map[string]any{"keep": true}},
			{Query: fmt.Sprint("q", j), Limit: 10, Offset: 5},
		} {
			if got, want := results(t, s, store.Namespace{"u"}, opt), results(t, exact, store.Namespace{"u"}, opt); got != want {
				t.Fatalf("query %d, %+v:\nindex %s\nexact %s", j, opt, got, want)
			}
		}
	}
}
