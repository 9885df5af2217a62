package bench

import (
	"context"
	"database/sql"
	binenc "encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/pgvector/pgvector-go"
	pgxvec "github.com/pgvector/pgvector-go/pgx"

	"github.com/memvault/memvault/embeddings"
	"github.com/memvault/memvault/memvaulttest/topicvec"
	"github.com/memvault/memvault/store"
	"github.com/memvault/memvault/store/pgstore"
	"github.com/memvault/memvault/store/sqlitestore"
)

// Fixed sizes of the store bench.
const (
	// benchPutKeys is how many distinct items the put rows write (again
	// and again), and how many vectors the raw put precomputes.
	benchPutKeys = 2048
	// benchSeedBatch is the seeding Batch size: above the PostgreSQL
	// store's COPY threshold, so that seeding goes through COPY.
	benchSeedBatch = 1000
)

// Modes of the store bench's baselines.
const (
	rawPGX     = "raw-pgx"      // PostgreSQL through pgx, no library
	rawPGXJoin = "raw-pgx+join" // the raw nearest query joined with the items' rows
	rawSQL     = "raw-sql"      // SQLite through database/sql, no library
)

// benchWords is the vocabulary of the synthetic memories the store bench
// writes: short sentences of 8-16 words drawn with a fixed seed.
var benchWords = strings.Fields(`customer prefers email phone chat invoice refund charge plan premium
basic annual monthly billing address shipping order delivery late damaged replacement warranty
password login account locked reset security device mobile desktop browser language english spanish
portuguese german french timezone morning evening weekend meeting call schedule reminder birthday
allergy vegetarian coffee tea travel flight hotel booking cancel upgrade downgrade discount coupon
loyalty points support ticket escalation manager feedback survey rating complaint praise`)

func benchText(r *rand.Rand) string {
	n := 8 + r.IntN(9)
	w := make([]string, n)
	for i := range w {
		w[i] = benchWords[r.IntN(len(benchWords))]
	}
	return strings.Join(w, " ")
}

// storeWorkload is what every mode of a store bench reads and writes: the
// seeded items' shape, the search queries and the items the put rows write,
// with their vectors precomputed for the raw baselines.
type storeWorkload struct {
	items, dims int
	emb         embeddings.Embedder
	queries     []string
	qvecs       [][]float32
	putTexts    []string
	putVecs     [][]float32
	rawPutVecs  [][]float32 // putVecs nudged (see rawPutVec)
	// embedCost is what the hashing embedder spent per put text here: the
	// embedding cost in each of memvault's puts and searches, which the
	// JS column (precomputed vectors) does not pay.
	embedCost time.Duration
}

func newStoreWorkload(ctx context.Context, items, dims int) (*storeWorkload, error) {
	w := &storeWorkload{items: items, dims: dims, emb: embeddings.NewUnkeyedHashing(dims)}
	r := rand.New(rand.NewPCG(3, 4))
	for range 64 {
		w.queries = append(w.queries, benchText(r))
	}
	var err error
	if w.qvecs, err = w.emb.EmbedDocuments(ctx, w.queries); err != nil {
		return nil, err
	}
	r = rand.New(rand.NewPCG(5, 6))
	for i := range benchPutKeys {
		// The key in the text keeps vectors distinct: items with identical
		// vectors tie, and ties make a search widen its candidates
		// (see store/pgstore).
		w.putTexts = append(w.putTexts, benchText(r)+" "+benchPutKey(i))
	}
	t0 := time.Now()
	if w.putVecs, err = w.emb.EmbedDocuments(ctx, w.putTexts); err != nil {
		return nil, err
	}
	w.embedCost = time.Since(t0) / time.Duration(len(w.putTexts))
	for _, v := range w.putVecs {
		v = slices.Clone(v)
		v[0] += 1e-3
		w.rawPutVecs = append(w.rawPutVecs, v)
	}
	return w, nil
}

func benchPutKey(i int) string { return fmt.Sprintf("k%d", i) }

// seedNS and seedKey name seeded item j.
func seedNS(j int) store.Namespace {
	return store.Namespace{"users", fmt.Sprintf("u%d", j%100), "memories"}
}
func seedKey(j int) string { return fmt.Sprintf("m%d", j) }

// seedChunks calls each with the texts of the seeded items, benchSeedBatch
// at a time (first is the number of the chunk's first item): the same texts
// for every store, memvault's or JS's (a fixed seed).
func (w *storeWorkload) seedChunks(each func(first int, texts []string) error) error {
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < w.items; i += benchSeedBatch {
		texts := make([]string, 0, benchSeedBatch)
		for range min(benchSeedBatch, w.items-i) {
			texts = append(texts, benchText(r))
		}
		if err := each(i, texts); err != nil {
			return err
		}
	}
	return nil
}

// seed puts the workload's items into st in batches.
func (w *storeWorkload) seed(ctx context.Context, st store.Store) error {
	return w.seedChunks(func(first int, texts []string) error {
		ops := make([]store.Op, len(texts))
		for i, t := range texts {
			j := first + i
			ops[i] = store.PutOp{Namespace: seedNS(j), Key: seedKey(j), Value: map[string]any{"text": t, "n": j}}
		}
		_, err := st.Batch(ctx, ops)
		return err
	})
}

// libOps are the library's operations on st, the same on every backend.
func (w *storeWorkload) libOps(st store.Store) map[string]benchOp {
	putNS := store.Namespace{"users", "bench", "put"}
	return map[string]benchOp{
		// New items like the seeded ones, under the searched prefix, so
		// that they neither crowd the queries' neighbourhoods nor get
		// filtered out of the candidates.
		"put": func(ctx context.Context, i int64) error {
			k := int(i % benchPutKeys)
			return st.Put(ctx, putNS, benchPutKey(k), map[string]any{"text": w.putTexts[k], "i": i})
		},
		"get": func(ctx context.Context, i int64) error {
			j := int(i % int64(w.items))
			it, err := st.Get(ctx, seedNS(j), seedKey(j))
			if err == nil && it == nil {
				err = fmt.Errorf("item m%d missing", j)
			}
			return err
		},
		"search_k10": func(ctx context.Context, i int64) error {
			res, err := st.Search(ctx, store.Namespace{"users"}, store.SearchOptions{Query: w.queries[i%int64(len(w.queries))], Limit: 10})
			if err == nil && len(res) != min(10, w.items) {
				err = fmt.Errorf("search returned %d items", len(res))
			}
			return err
		},
	}
}

// storeBenchRun is one backend's bench: library variants by mode and the
// raw baselines, op by op.
type storeBenchRun struct {
	lib       map[string]store.Store // by mode label
	libModes  []string
	raw       map[string]map[string]benchOp // op → baseline mode → op
	rawModes  map[string][]string           // op → baseline modes, in order
	baseline  string
	extraBase string // a second baseline the summary compares to, or ""
	// external holds the modes measured outside this process (the JS
	// column), run after the library's in each slice round.
	external map[string]sliceRunner
}

func (run *storeBenchRun) measure(ctx context.Context, w *storeWorkload, p *benchPrinter, bf params) error {
	libOps := make(map[string]map[string]benchOp, len(run.lib))
	for mode, st := range run.lib {
		libOps[mode] = w.libOps(st)
	}
	for _, conc := range []int{1, bf.concurrency} {
		for _, op := range []string{"put", "get", "search_k10"} {
			if !bf.wants(op) {
				continue
			}
			modes := append(slices.Clone(run.rawModes[op]), run.libModes...)
			modes = append(modes, slices.Sorted(maps.Keys(run.external))...)
			rows, err := compare(ctx, "store", op, modes, conc, bf.duration, func(mode string) benchOp {
				if f := run.raw[op][mode]; f != nil {
					return f
				}
				return libOps[mode][op]
			}, run.external)
			if err != nil {
				return err
			}
			for _, r := range rows {
				if err := p.print(r); err != nil {
					return err
				}
			}
		}
	}
	p.summary(run.baseline)
	if run.extraBase != "" && !p.json {
		p.ratios(run.extraBase, func(r Row) bool { return r.Op == "search_k10" && !strings.HasPrefix(r.Mode, "raw-") })
	}
	return nil
}

func benchStorePG(ctx context.Context, out io.Writer, dsn string, asJSON bool, bf params, jsDir string) error {
	pool, schema, drop, err := benchSchema(ctx, dsn, bf.concurrency)
	if err != nil {
		return err
	}
	defer drop()
	// The baselines' pool sends vectors in pgvector's binary format, as
	// the store does.
	rc := pool.Config().Copy()
	rc.AfterConnect = func(ctx context.Context, c *pgx.Conn) error { return pgxvec.RegisterTypes(ctx, c) }
	rawPool, err := pgxpool.NewWithConfig(ctx, rc)
	if err != nil {
		return err
	}
	defer rawPool.Close()
	sers, err := benchSerializers()
	if err != nil {
		return err
	}
	p := &benchPrinter{out: out, json: asJSON}
	if !asJSON {
		fmt.Fprintf(out, "store bench (postgres): %d items of %d dims (offline hashing embedder), %s per row, concurrency 1 and %d\n", bf.items, bf.dims, bf.duration, bf.concurrency)
	}
	settings, err := clusterSettings(ctx, pool)
	if err != nil {
		return err
	}
	if err := p.settings(settings); err != nil {
		return err
	}
	w, err := newStoreWorkload(ctx, bf.items, bf.dims)
	if err != nil {
		return err
	}
	run := &storeBenchRun{lib: map[string]store.Store{}, baseline: rawPGX, extraBase: rawPGXJoin}
	var hnswSchema string
	start := time.Now()
	for _, kind := range []pgstore.ANNKind{pgstore.HNSW, pgstore.Flat} {
		for _, mode := range []string{"plaintext", "encrypted"} {
			sch := fmt.Sprintf("%s_%s_%s", schema, kind, mode[:3])
			if _, err := pool.Exec(ctx, "CREATE SCHEMA "+pgx.Identifier{sch}.Sanitize()); err != nil {
				return err
			}
			defer pool.Exec(context.Background(), "DROP SCHEMA "+pgx.Identifier{sch}.Sanitize()+" CASCADE") //nolint:errcheck // best-effort cleanup
			idx := &store.IndexConfig{Dims: bf.dims, Embedder: w.emb, Fields: []string{"text"}}
			o := pgstore.Options{Schema: sch, Index: idx, ANN: pgstore.ANNConfig{Kind: kind}}
			if mode == "encrypted" {
				o.Serde = sers["encrypted"]
			}
			st, err := pgstore.New(pool, o)
			if err != nil {
				return err
			}
			defer st.Close()
			if err := st.Setup(ctx); err != nil {
				return err
			}
			if err := seedPG(ctx, pool, sch, w, st); err != nil {
				return err
			}
			label := mode + "/" + string(kind)
			run.lib[label] = st
			run.libModes = append(run.libModes, label)
			if hnswSchema == "" {
				hnswSchema = sch
			}
		}
	}
	if !asJSON {
		fmt.Fprintf(out, "seeded %d stores in %s\n", len(run.lib), time.Since(start).Round(time.Millisecond))
	}
	if jsDir != "" {
		jsSchema := schema + "_lgjs"
		defer pool.Exec(context.Background(), "DROP SCHEMA IF EXISTS "+pgx.Identifier{jsSchema}.Sanitize()+" CASCADE") //nolint:errcheck // best-effort cleanup, after node is gone
		js, err := startJSStore(ctx, out, asJSON, jsDir, pool, jsSchema, bf.concurrency, w)
		if err != nil {
			return err
		}
		defer js.Close()
		run.external = map[string]sliceRunner{jsMode: func(ctx context.Context, op string, conc int, d time.Duration) (sample, error) {
			return js.run(ctx, "store_"+op, conc, d) // bench.mjs names the store's ops apart from the checkpointer's
		}}
	}
	if _, err := pool.Exec(ctx, "ANALYZE"); err != nil {
		return err
	}
	if !asJSON {
		fmt.Fprintln(out)
	}
	raw := newRawPG(rawPool, hnswSchema, w)
	run.raw = map[string]map[string]benchOp{
		"put":        {rawPGX: raw.put},
		"get":        {rawPGX: raw.get},
		"search_k10": {rawPGX: raw.nearest(false), rawPGXJoin: raw.nearest(true)},
	}
	run.rawModes = map[string][]string{"put": {rawPGX}, "get": {rawPGX}, "search_k10": {rawPGX, rawPGXJoin}}
	return run.measure(ctx, w, p, bf)
}

// seedPG seeds a PostgreSQL store, its ANN index built after the loading
// (see withoutANNIndexes).
func seedPG(ctx context.Context, pool *pgxpool.Pool, schema string, w *storeWorkload, st store.Store) error {
	return withoutANNIndexes(ctx, pool, schema, func() error { return w.seed(ctx, st) })
}

// withoutANNIndexes runs load with the ANN indexes of schema's
// store_vectors table dropped, and builds them again after with the DDL
// they were made with: CREATE INDEX over the loaded table is far quicker
// than inserting 100 000 vectors one by one into an HNSW graph, and the
// bench measures operations on the built store, not the loading. memvault's
// store and LangGraph.js's PostgresStore both name the table store_vectors
// (with different columns and index names).
func withoutANNIndexes(ctx context.Context, pool *pgxpool.Pool, schema string, load func() error) error {
	rows, err := pool.Query(ctx, `SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = $1 AND tablename = 'store_vectors' AND indexdef ~* 'USING (hnsw|ivfflat)'`, schema)
	if err != nil {
		return err
	}
	idx, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) ([2]string, error) {
		var nd [2]string
		err := r.Scan(&nd[0], &nd[1])
		return nd, err
	})
	if err != nil {
		return err
	}
	for _, nd := range idx {
		if _, err := pool.Exec(ctx, `DROP INDEX `+pgx.Identifier{schema, nd[0]}.Sanitize()); err != nil {
			return err
		}
	}
	if err := load(); err != nil {
		return err
	}
	for _, nd := range idx {
		if _, err := pool.Exec(ctx, nd[1]); err != nil {
			return err
		}
	}
	return nil
}

// rawPG is the PostgreSQL baseline: what a caller without memvault sends
// on the same tables (the plaintext HNSW store's): vectors precomputed,
// sent in binary, values decoded with encoding/json.
type rawPG struct {
	pool            *pgxpool.Pool
	w               *storeWorkload
	store, vectors  string
	vecType         string
	upsert, upsertV string
}

func newRawPG(pool *pgxpool.Pool, schema string, w *storeWorkload) *rawPG {
	r := &rawPG{pool: pool, w: w, store: pgx.Identifier{schema, "store"}.Sanitize(), vectors: pgx.Identifier{schema, "store_vectors"}.Sanitize(), vecType: "vector"}
	if w.dims > 2000 { // the store's rule: halfvec above pgvector's 2000
		r.vecType = "halfvec"
	}
	r.upsert = `INSERT INTO ` + r.store + ` (prefix, key, value, created_at, updated_at) VALUES ($1, $2, $3, now(), now())
ON CONFLICT (prefix, key) DO UPDATE SET value = EXCLUDED.value, updated_at = EXCLUDED.updated_at`
	r.upsertV = `INSERT INTO ` + r.vectors + ` (prefix, key, field_name, embedding, created_at, updated_at) VALUES ($1, $2, 'text', $3, now(), now())
ON CONFLICT (prefix, key, field_name) DO UPDATE SET embedding = EXCLUDED.embedding, updated_at = EXCLUDED.updated_at`
	return r
}

func (r *rawPG) vec(v []float32) any {
	if r.vecType == "halfvec" {
		return pgvector.NewHalfVector(v)
	}
	return pgvector.NewVector(v)
}

// put upserts an item and its vector in one implicit transaction (one
// round trip), under a namespace of its own in the same tables.
func (r *rawPG) put(ctx context.Context, i int64) error {
	k := int(i % benchPutKeys)
	value, err := json.Marshal(map[string]any{"text": r.w.putTexts[k], "i": i})
	if err != nil {
		return err
	}
	b := &pgx.Batch{}
	b.Queue(r.upsert, "users.bench.raw", benchPutKey(k), string(value))
	b.Queue(r.upsertV, "users.bench.raw", benchPutKey(k), r.vec(r.w.rawPutVec(k)))
	return r.pool.SendBatch(ctx, b).Close()
}

// rawPutVec is the vector the raw baseline's put k writes: the library
// put's, nudged. The baseline writes into the plaintext HNSW store's
// tables; the very same vectors there would tie with the library's items
// and turn that store's searches into tie-breaking ones, which no other
// store sees.
func (w *storeWorkload) rawPutVec(k int) []float32 { return w.rawPutVecs[k] }

func (r *rawPG) get(ctx context.Context, i int64) error {
	j := int(i % int64(r.w.items))
	var raw []byte
	var created, updated time.Time
	if err := r.pool.QueryRow(ctx, `SELECT value, created_at, updated_at FROM `+r.store+` WHERE prefix = $1 AND key = $2`,
		seedNS(j).String(), seedKey(j)).Scan(&raw, &created, &updated); err != nil {
		return err
	}
	var v map[string]any
	return json.Unmarshal(raw, &v)
}

// nearest is the raw nearest-neighbour query the index serves: the keys
// only, or (join) with the items' values, decoded.
func (r *rawPG) nearest(join bool) benchOp {
	q := `SELECT prefix, key, NULL::jsonb FROM ` + r.vectors + ` ORDER BY embedding <=> $1 LIMIT 10`
	if join {
		q = `SELECT v.prefix, v.key, s.value FROM (
    SELECT prefix, key, embedding <=> $1 AS dist FROM ` + r.vectors + ` ORDER BY embedding <=> $1 LIMIT 10) v
JOIN ` + r.store + ` s ON s.prefix = v.prefix AND s.key = v.key ORDER BY v.dist`
	}
	want := min(10, r.w.items)
	return func(ctx context.Context, i int64) error {
		rows, err := r.pool.Query(ctx, q, r.vec(r.w.qvecs[i%int64(len(r.w.qvecs))]))
		if err != nil {
			return err
		}
		defer rows.Close()
		n := 0
		for rows.Next() {
			var prefix, key string
			var raw []byte
			if err := rows.Scan(&prefix, &key, &raw); err != nil {
				return err
			}
			if join {
				var v map[string]any
				if err := json.Unmarshal(raw, &v); err != nil {
					return err
				}
			}
			n++
		}
		if err := rows.Err(); err != nil {
			return err
		}
		if n != want {
			return fmt.Errorf("raw query returned %d rows", n)
		}
		return nil
	}
}

func benchStoreSQLite(ctx context.Context, out io.Writer, asJSON bool, bf params) error {
	dir, err := os.MkdirTemp("", "memvault-bench-store-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	sers, err := benchSerializers()
	if err != nil {
		return err
	}
	p := &benchPrinter{out: out, json: asJSON}
	if !asJSON {
		fmt.Fprintf(out, "store bench (sqlite, files in %s): %d items of %d dims (offline hashing embedder), %s per row, concurrency 1 and %d\n\n",
			os.TempDir(), bf.items, bf.dims, bf.duration, bf.concurrency)
	}
	w, err := newStoreWorkload(ctx, bf.items, bf.dims)
	if err != nil {
		return err
	}
	run := &storeBenchRun{lib: map[string]store.Store{}, baseline: rawSQL}
	start := time.Now()
	var plainPath string
	for _, mode := range []string{"plaintext", "encrypted"} {
		path := filepath.Join(dir, mode+".db")
		o := sqlitestore.Options{Index: &store.IndexConfig{Dims: bf.dims, Embedder: w.emb, Fields: []string{"text"}}}
		if mode == "encrypted" {
			o.Serde = sers["encrypted"]
		} else {
			plainPath = path
		}
		st, err := sqlitestore.Open(ctx, path, o)
		if err != nil {
			return err
		}
		defer st.Close()
		if err := w.seed(ctx, st); err != nil {
			return err
		}
		run.lib[mode] = st
		run.libModes = append(run.libModes, mode)
	}
	if !asJSON {
		fmt.Fprintf(out, "seeded %d stores in %s\n\n", len(run.lib), time.Since(start).Round(time.Millisecond))
	}
	raw, err := openRawStoreSQLite(plainPath, w)
	if err != nil {
		return err
	}
	defer raw.close()
	run.raw = map[string]map[string]benchOp{"put": {rawSQL: raw.put}, "get": {rawSQL: raw.get}, "search_k10": {rawSQL: raw.search}}
	run.rawModes = map[string][]string{"put": {rawSQL}, "get": {rawSQL}, "search_k10": {rawSQL}}
	return run.measure(ctx, w, p, bf)
}

// rawStoreSQLite is the SQLite baseline on the plaintext store's file: what a
// caller without memvault does with database/sql on the same tables, with
// the pragmas memvault uses (WAL, synchronous NORMAL) and one writer.
type rawStoreSQLite struct {
	w         *storeWorkload
	writer, r *sql.DB
}

func openRawStoreSQLite(path string, w *storeWorkload) (*rawStoreSQLite, error) {
	dsn := path + "?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=foreign_keys(1)&_pragma=synchronous(NORMAL)"
	writer, err := sql.Open(sqliteDriver, dsn+"&_txlock=immediate")
	if err != nil {
		return nil, err
	}
	writer.SetMaxOpenConns(1)
	r, err := sql.Open(sqliteDriver, dsn+"&_pragma=query_only(1)")
	if err != nil {
		writer.Close()
		return nil, err
	}
	return &rawStoreSQLite{w: w, writer: writer, r: r}, nil
}

func (s *rawStoreSQLite) close() {
	s.writer.Close()
	s.r.Close()
}

func (s *rawStoreSQLite) put(ctx context.Context, i int64) error {
	k := int(i % benchPutKeys)
	value, err := json.Marshal(map[string]any{"text": s.w.putTexts[k], "i": i})
	if err != nil {
		return err
	}
	v := s.w.rawPutVec(k)
	blob := make([]byte, 4*len(v))
	for j, f := range v {
		binenc.LittleEndian.PutUint32(blob[4*j:], math.Float32bits(f))
	}
	now := time.Now().UnixNano()
	tx, err := s.writer.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback() //nolint:errcheck // after Commit a no-op
	if _, err := tx.ExecContext(ctx, `INSERT INTO store (prefix, key, value, created_at, updated_at) VALUES (?, ?, ?, ?, ?)
ON CONFLICT (prefix, key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`, "users.bench.raw", benchPutKey(k), string(value), now, now); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO store_vectors (prefix, key, field_name, embedding, created_at, updated_at) VALUES (?, ?, 'text', ?, ?, ?)
ON CONFLICT (prefix, key, field_name) DO UPDATE SET embedding = excluded.embedding, updated_at = excluded.updated_at`, "users.bench.raw", benchPutKey(k), blob, now, now); err != nil {
		return err
	}
	return tx.Commit()
}

func (s *rawStoreSQLite) get(ctx context.Context, i int64) error {
	j := int(i % int64(s.w.items))
	var raw []byte
	var created, updated int64
	if err := s.r.QueryRowContext(ctx, `SELECT value, created_at, updated_at FROM store WHERE prefix = ? AND key = ?`,
		seedNS(j).String(), seedKey(j)).Scan(&raw, &created, &updated); err != nil {
		return err
	}
	var v map[string]any
	return json.Unmarshal(raw, &v)
}

// search scans every vector, scores it exactly (cosine) in Go, keeps the
// ten best and reads their values: exact search without memvault.
func (s *rawStoreSQLite) search(ctx context.Context, i int64) error {
	q := s.w.qvecs[i%int64(len(s.w.qvecs))]
	var qn float64
	for _, f := range q {
		qn += float64(f) * float64(f)
	}
	qn = math.Sqrt(qn)
	type scored struct {
		prefix, key string
		score       float64
	}
	var top []scored // best first, at most 10
	rows, err := s.r.QueryContext(ctx, `SELECT prefix, key, embedding FROM store_vectors WHERE prefix >= 'users.' AND prefix < 'users/'`)
	if err != nil {
		return err
	}
	defer rows.Close()
	var prefix, key string
	var blob []byte
	for rows.Next() {
		if err := rows.Scan(&prefix, &key, &blob); err != nil {
			return err
		}
		if len(blob) != 4*len(q) {
			continue
		}
		var dot, n float64
		for j := range q {
			f := float64(math.Float32frombits(binenc.LittleEndian.Uint32(blob[4*j:])))
			dot += f * float64(q[j])
			n += f * f
		}
		sc := dot / (math.Sqrt(n) * qn)
		if len(top) == 10 && sc <= top[9].score {
			continue
		}
		at, _ := slices.BinarySearchFunc(top, sc, func(e scored, t float64) int {
			switch {
			case e.score > t:
				return -1
			case e.score < t:
				return 1
			}
			return 0
		})
		top = slices.Insert(top, at, scored{prefix, key, sc})
		if len(top) > 10 {
			top = top[:10]
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	rows.Close()
	for _, t := range top {
		var raw []byte
		if err := s.r.QueryRowContext(ctx, `SELECT value FROM store WHERE prefix = ? AND key = ?`, t.prefix, t.key).Scan(&raw); err != nil {
			return err
		}
		var v map[string]any
		if err := json.Unmarshal(raw, &v); err != nil {
			return err
		}
	}
	if len(top) != min(10, s.w.items) {
		return fmt.Errorf("raw search found %d items", len(top))
	}
	return nil
}

// topicResult is one data set's figures in the clustered mode.
type topicResult struct {
	Data          string  `json:"data"`
	Topics        int     `json:"topics"`
	Items         int     `json:"items"`
	Dims          int     `json:"dims"`
	FirstSearchMS float64 `json:"first_search_ms"`
	// CPU time of the process per search (the 100 after the first): less
	// sensitive to a loaded machine than the latencies.
	CPUMS      float64 `json:"cpu_ms_per_search"`
	P50MS      float64 `json:"p50_ms"`
	P95MS      float64 `json:"p95_ms"`
	RecallAt10 float64 `json:"recall_at_10"`
	RSSMB      float64 `json:"rss_mb"`
}

// benchStoreSQLiteTopics is the store bench's clustered mode on SQLite:
// search k=10 over bf.items items of bf.dims dimensions whose vectors
// fall into topics dense topics (one user's memories), beside the same
// count spread over items/100 topics (the README's data), in the same
// run. For each data set it seeds a file, closes it, opens it again and
// reports the first search after the open, p50/p95 of 100 searches,
// recall@10 against brute force over the generated vectors, and the
// process's resident memory after them (the other data set's store
// closed and its memory returned first).
func benchStoreSQLiteTopics(ctx context.Context, out io.Writer, asJSON bool, bf params, topics int) error {
	dir, err := os.MkdirTemp("", "memvault-bench-store-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	if !asJSON {
		fmt.Fprintf(out, "store bench (sqlite, files in %s): search k=10 over %d items of %d dims, spread over %d topics and clustered in %d\n\n",
			os.TempDir(), bf.items, bf.dims, max(bf.items/100, 1), topics)
	}
	var results []topicResult
	for _, set := range []struct {
		name   string
		topics int
	}{{"spread", max(bf.items/100, 1)}, {"clustered", topics}} {
		res, err := benchTopicSet(ctx, filepath.Join(dir, set.name+".db"), bf, set.topics)
		if err != nil {
			return fmt.Errorf("%s data: %w", set.name, err)
		}
		res.Data = set.name
		results = append(results, res)
		if !asJSON {
			fmt.Fprintf(out, "%-9s %4d topics: first search after open %7.1f ms, p50 %6.1f ms, p95 %6.1f ms, CPU %5.1f ms/search, recall@10 %.3f, RSS %5.0f MB\n",
				res.Data, res.Topics, res.FirstSearchMS, res.P50MS, res.P95MS, res.CPUMS, res.RecallAt10, res.RSSMB)
		}
	}
	if asJSON {
		return json.NewEncoder(out).Encode(map[string]any{"bench": "store", "backend": "sqlite", "search_k10": results})
	}
	return nil
}

// benchTopicSet seeds path with one data set of benchStoreSQLiteTopics and
// measures its searches.
func benchTopicSet(ctx context.Context, path string, bf params, topics int) (topicResult, error) {
	const k, queries = 10, 100
	res := topicResult{Topics: topics, Items: bf.items, Dims: bf.dims}
	g := topicvec.New(bf.items, bf.dims, topics) // an embedder of "v<i>" and "q<j>": the bench measures the store
	o := sqlitestore.Options{Index: &store.IndexConfig{Dims: bf.dims, Embedder: g, Fields: []string{"text"}}}
	st, err := sqlitestore.Open(ctx, path, o)
	if err != nil {
		return res, err
	}
	ns := store.Namespace{"users", "u1", "memories"}
	for i := 0; i < bf.items; i += benchSeedBatch {
		var ops []store.Op
		for j := i; j < min(bf.items, i+benchSeedBatch); j++ {
			ops = append(ops, store.PutOp{Namespace: ns, Key: fmt.Sprint(j), Value: map[string]any{"text": fmt.Sprint("v", j)}})
		}
		if _, err := st.Batch(ctx, ops); err != nil {
			st.Close()
			return res, err
		}
	}
	// The first search reads every code and stores the index's snapshot,
	// which the open below loads, as a process opening the file later does.
	if _, err := st.Search(ctx, ns, store.SearchOptions{Query: "q0", Limit: k}); err != nil {
		st.Close()
		return res, err
	}
	if err := st.Close(); err != nil {
		return res, err
	}
	runtime.GC()
	debug.FreeOSMemory()

	if st, err = sqlitestore.Open(ctx, path, o); err != nil {
		return res, err
	}
	defer st.Close()
	search := func(j int) ([]store.SearchItem, time.Duration, error) {
		t0 := time.Now()
		items, err := st.Search(ctx, ns, store.SearchOptions{Query: fmt.Sprint("q", j), Limit: k})
		return items, time.Since(t0), err
	}
	_, first, err := search(0)
	if err != nil {
		return res, err
	}
	res.FirstSearchMS = benchMS(first)
	got := make([][]store.SearchItem, queries)
	lat := make([]time.Duration, queries)
	cpu0 := processCPU()
	for j := range queries {
		if got[j], lat[j], err = search(j + 1); err != nil {
			return res, err
		}
	}
	res.CPUMS = benchMS(processCPU()-cpu0) / queries
	res.RSSMB = vmRSSMB()
	slices.Sort(lat)
	res.P50MS, res.P95MS = benchMS(lat[queries/2]), benchMS(lat[queries*95/100])

	// Recall against brute force over the generated vectors, by cosine
	// (the index's default distance).
	type hit struct {
		key   string
		score float64
	}
	qs := make([][]float32, queries)
	truth := make([][]hit, queries)
	for j := range qs {
		qs[j] = g.Query(j + 1)
	}
	for i := range bf.items {
		v := g.Item(i)
		for j, q := range qs {
			var dot, vv, qq float64
			for d := range v {
				dot += float64(v[d]) * float64(q[d])
				vv += float64(v[d]) * float64(v[d])
				qq += float64(q[d]) * float64(q[d])
			}
			h := hit{fmt.Sprint(i), dot / math.Sqrt(vv*qq)}
			t := truth[j]
			if len(t) < k || h.score > t[len(t)-1].score {
				t = append(t, h)
				slices.SortFunc(t, func(a, b hit) int { return cmpDesc(a.score, b.score) })
				truth[j] = t[:min(len(t), k)]
			}
		}
	}
	found := 0
	for j := range queries {
		want := map[string]bool{}
		for _, h := range truth[j] {
			want[h.key] = true
		}
		for _, it := range got[j] {
			if want[it.Key] {
				found++
			}
		}
	}
	res.RecallAt10 = float64(found) / float64(queries*k)
	return res, nil
}

func cmpDesc(a, b float64) int {
	switch {
	case a > b:
		return -1
	case a < b:
		return 1
	}
	return 0
}

func benchMS(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// vmRSSMB is the process's resident memory in MB (0 off Linux).
func vmRSSMB() float64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for line := range strings.Lines(string(b)) {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			var kb float64
			fmt.Sscan(strings.TrimSpace(rest), &kb)
			return kb / 1024
		}
	}
	return 0
}
