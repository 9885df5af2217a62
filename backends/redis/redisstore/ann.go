package redisstore

import (
	"context"
	"fmt"
	"math"

	"github.com/redis/go-redis/v9"

	"github.com/memvault/memvault/store"
	"github.com/memvault/memvault/store/engine"
	"github.com/memvault/memvault/store/vecindex"
)

// maxCandidates bounds one VSIM (engine.ANNPolicy): a page that needs
// more is ranked exactly.
const maxCandidates = 1000

// ANNPolicy declares how the vector set is asked (engine.ANNDriver).
func (d *driver) ANNPolicy() engine.ANNPolicy {
	return engine.ANNPolicy{MaxCandidates: maxCandidates, PerItem: 1}
}

// Nearest asks the vector set for the q.N elements nearest to q.Vector
// under q.Prefix (VSIM with FILTER on the elements' prefix tags), reads
// their rows in one script and scores each candidate's vector exactly
// from the row's stored float32s (VSIM's own scores come from 8-bit
// quantized copies and would not match the engine's exact ranking). The
// prefix is checked again on every row.
func (t *tx) Nearest(ctx context.Context, q engine.ANNQuery) ([]engine.Candidate, int, error) {
	if len(q.Vector) != t.d.dims {
		return nil, 0, nil
	}
	args := []any{"VSIM", t.d.k.vset, "FP32", fp32(q.Vector), "COUNT", q.N}
	if q.N > 100 || q.Widen {
		// The server's default exploration suits a page (EF 200 doubled
		// the cost of a k = 10 query at 2 000 × 1 536 for the same
		// recall); a large or widening query explores at least as far as
		// it asks.
		args = append(args, "EF", max(q.N, 200))
	}
	if len(q.Prefix) > 0 {
		args = append(args, "FILTER", `"`+prefixTag(q.Prefix.String())+`" in .p`)
		if q.Widen {
			// VSIM's default visits 100 × COUNT elements for a filter;
			// a widening query may visit the whole set.
			args = append(args, "FILTER-EF", math.MaxInt32)
		}
	}
	els, err := t.d.rdb.Do(ctx, args...).StringSlice()
	if err != nil {
		if err == redis.Nil {
			return nil, 0, nil
		}
		return nil, 0, fmt.Errorf("redis: VSIM: %w", err)
	}
	type hit struct {
		id string
		i  int
	}
	hits := make([]hit, 0, len(els))
	var ids []string
	seen := map[string]bool{}
	for _, e := range els {
		id, i, ok := splitElement(e)
		if !ok {
			continue
		}
		hits = append(hits, hit{id, i})
		if !seen[id] {
			seen[id] = true
			ids = append(ids, id)
		}
	}
	rs, vs, err := t.rows(ctx, ids, true)
	if err != nil {
		return nil, 0, err
	}
	byID := make(map[string]int, len(rs))
	for j, r := range rs {
		byID[rowID(r.RowKey)] = j
	}
	qn := norm(q.Vector)
	cands := make([]engine.Candidate, 0, len(hits))
	for _, h := range hits {
		j, ok := byID[h.id]
		if !ok || h.i >= len(vs[j]) || !under(rs[j].NS, q.Prefix) {
			continue // gone since, or a tag collision
		}
		v := vs[j][h.i]
		if len(v.Vec) != len(q.Vector) {
			continue
		}
		r := rs[j]
		c := engine.Candidate{Scored: vecindex.Scored{Key: r.RowKey, Updated: r.Updated.UnixNano(), Score: cosine(q.Vector, qn, v)}}
		if r.Expires.IsZero() || r.Expires.After(q.Now) {
			c.Row = &rs[j]
		}
		cands = append(cands, c)
	}
	return cands, len(els), nil
}

// cosine is the store's cosine score of v against q (|q| = qn), computed
// as the engine's exact scan computes it (float32 dot product).
func cosine(q []float32, qn float64, v store.Vector) float64 {
	vn := v.Norm
	if vn == 0 {
		vn = norm(v.Vec)
	}
	if vn == 0 || qn == 0 {
		return 0
	}
	return float64(dot(v.Vec, q)) / (vn * qn)
}

func dot(a, b []float32) float32 {
	var s float32
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

func norm(v []float32) float64 { return math.Sqrt(float64(dot(v, v))) }

// hasVectorSets reports whether the server runs vector sets (VADD is a
// command).
func hasVectorSets(ctx context.Context, rdb redis.UniversalClient) (bool, error) {
	info, err := rdb.Do(ctx, "COMMAND", "INFO", "VADD").Slice()
	if err != nil {
		return false, fmt.Errorf("redis: COMMAND INFO: %w", err)
	}
	return len(info) > 0 && info[0] != nil, nil
}
