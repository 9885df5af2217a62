package bench

import (
	"context"
	"encoding/base64"
	binenc "encoding/binary"
	"fmt"
	"io"
	"math"
	"slices"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// startJSStore starts JS LangGraph's PostgresStore (node, bench.mjs) in
// schema, a schema of its own: its tables differ from memvault's
// (namespace_path text, text_content beside each vector, an HNSW index
// with its own parameters), so it cannot share theirs. It then loads the
// same seeded items the Go stores hold, through the JS store's batch put,
// with its ANN index built after the loading as the Go stores' are.
//
// LangGraph's store embeds on put and search. Its embed function in node
// looks up vectors computed here by the same offline hashing embedder
// memvault's stores use, so that both sides index and search the same
// vectors; JS's embedding cost is left out of its column, and the header
// says what memvault pays per text for comparison.
func startJSStore(ctx context.Context, out io.Writer, asJSON bool, dir string, pool *pgxpool.Pool, schema string, maxConc int, w *storeWorkload) (*jsBench, error) {
	j, err := startNode(ctx, dir)
	if err != nil {
		return nil, err
	}
	ok := false
	defer func() {
		if !ok {
			_ = j.Close()
		}
	}()
	known := slices.Concat(w.queries, w.putTexts)
	vecs := make([]string, 0, len(known))
	for _, v := range slices.Concat(w.qvecs, w.putVecs) {
		vecs = append(vecs, vecBase64(v))
	}
	var info struct {
		Version string `json:"version"`
	}
	// The connection string travels on stdin, not in argv, so a password
	// never shows in the process list.
	init := map[string]any{"cmd": "init_store", "dsn": nodeDSN(pool), "schema": schema, "max_conc": maxConc, "dims": w.dims,
		"items": w.items, "queries": w.queries, "put_texts": w.putTexts, "texts": known, "vecs": vecs}
	if err := j.call(init, &info); err != nil {
		return nil, err
	}
	start := time.Now()
	err = withoutANNIndexes(ctx, pool, schema, func() error {
		return w.seedChunks(func(first int, texts []string) error {
			vs, err := w.emb.EmbedDocuments(ctx, texts)
			if err != nil {
				return err
			}
			b64 := make([]string, len(vs))
			for i, v := range vs {
				b64[i] = vecBase64(v)
			}
			var done struct {
				OK bool `json:"ok"`
			}
			return j.call(map[string]any{"cmd": "store_seed", "first": first, "texts": texts, "vecs": b64, "par": maxConc}, &done)
		})
	})
	if err != nil {
		return nil, fmt.Errorf("--js: seeding the JS store: %w", err)
	}
	if !asJSON {
		fmt.Fprintf(out, "%s: JS LangGraph's PostgresStore %s (node) in schema %s, its own tables; seeded %d items in %s (batch puts, %d batches in parallel, HNSW index built after)\n",
			jsMode, info.Version, schema, w.items, time.Since(start).Round(time.Millisecond), maxConc)
		fmt.Fprintf(out, "%s: embedding cost excluded: its embed function looks up vectors precomputed in Go with memvault's hashing embedder, which costs memvault %.1f µs per text in each put and search\n",
			jsMode, float64(w.embedCost.Nanoseconds())/1000)
	}
	ok = true
	return j, nil
}

// vecBase64 is v as little-endian float32s in base64: about a third of the
// size of JSON numbers, which matters at 1536 dimensions and 100 000 items.
func vecBase64(v []float32) string {
	b := make([]byte, 4*len(v))
	for i, f := range v {
		binenc.LittleEndian.PutUint32(b[4*i:], math.Float32bits(f))
	}
	return base64.StdEncoding.EncodeToString(b)
}
