package pgstore

import (
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/memvault/memvault/store"
)

// tables holds the qualified table names and the SQL built from them once.
type tables struct {
	schema   string // quoted, or "" for unqualified names
	store    string
	vectors  string
	embedder string // memvault_store_embedder: the vectors' embedder
}

func newTables(schema string) tables {
	q := func(name string) string { return name }
	var quoted string
	if schema != "" {
		quoted = pgx.Identifier{schema}.Sanitize()
		q = func(name string) string { return quoted + "." + name }
	}
	return tables{schema: quoted, store: q("store"), vectors: q("store_vectors"), embedder: q("memvault_store_embedder")}
}

// indexSpec is a validated IndexConfig with its SQL pieces.
type indexSpec struct {
	cfg      store.IndexConfig
	ann      ANNConfig
	dims     int
	vecType  string // vector or halfvec
	op       string // <=>, <-> or <#>
	opsClass string // e.g. vector_cosine_ops
	kind     ANNKind
	fields   []string
	estimate int // vectors per item expected from the configured fields
	efSearch int
	probes   int
}

func newIndexSpec(cfg store.IndexConfig, ann ANNConfig) (*indexSpec, error) {
	if cfg.Embedder == nil {
		return nil, fmt.Errorf("%w: index config without an embedder", store.ErrInvalidArgument)
	}
	sp := &indexSpec{cfg: cfg, ann: ann, dims: cfg.Dims}
	if sp.dims == 0 {
		sp.dims = cfg.Embedder.Dims()
	}
	if sp.dims <= 0 {
		return nil, fmt.Errorf("%w: index dims %d", store.ErrInvalidArgument, sp.dims)
	}
	if d := cfg.Embedder.Dims(); d > 0 && d != sp.dims {
		return nil, fmt.Errorf("%w: index dims %d, embedder %s makes %d", ErrDims, sp.dims, cfg.Embedder.Name(), d)
	}
	sp.vecType = "vector"
	if ann.HalfVec || sp.dims > halfvecThreshold {
		sp.vecType = "halfvec"
	}
	var suffix string
	switch cfg.Distance {
	case store.Cosine, "":
		sp.op, suffix = "<=>", "cosine"
	case store.L2:
		sp.op, suffix = "<->", "l2"
	case store.InnerProduct:
		sp.op, suffix = "<#>", "ip"
	default:
		return nil, fmt.Errorf("%w: unknown distance %q", store.ErrInvalidArgument, cfg.Distance)
	}
	sp.opsClass = sp.vecType + "_" + suffix + "_ops"
	sp.kind = ann.Kind
	if sp.kind == "" {
		sp.kind = HNSW
	}
	switch sp.kind {
	case HNSW, IVFFlat, Flat:
	default:
		return nil, fmt.Errorf("%w: unknown ANN kind %q", store.ErrInvalidArgument, sp.kind)
	}
	for _, v := range []int{ann.M, ann.EFConstruction, ann.EFSearch, ann.Lists, ann.Probes} {
		if v < 0 {
			return nil, fmt.Errorf("%w: negative ANN parameter", store.ErrInvalidArgument)
		}
	}
	if sp.kind == HNSW && sp.dims > 4000 || sp.kind == IVFFlat && sp.dims > 4000 {
		return nil, fmt.Errorf("%w: pgvector indexes at most 4000 dimensions (halfvec); use ANN kind flat", store.ErrInvalidArgument)
	}
	sp.efSearch = ann.EFSearch
	if sp.efSearch == 0 {
		sp.efSearch = 40
	}
	sp.probes = ann.Probes
	if sp.probes == 0 {
		sp.probes = 1
	}
	sp.fields = cfg.Fields
	if sp.fields == nil {
		sp.fields = []string{"$"}
	}
	// The engine checks the paths (items.NewConfig).
	sp.estimate = estimateVectors(sp.fields)
	return sp, nil
}

// estimateVectors guesses how many vectors an item has: one per path, more
// for paths with wildcards, which may yield several texts.
func estimateVectors(fields []string) int {
	n := 0
	for _, f := range fields {
		if strings.Contains(f, "*") {
			n += 4
		} else {
			n++
		}
	}
	return max(n, 1)
}

// indexDDL is vector migration 2: the ANN index, or "" for flat.
func (sp *indexSpec) indexDDL(t tables) string {
	// As LangGraph does, WITH carries only the parameters configured;
	// pgvector's defaults are m=16, ef_construction=64, lists=100.
	var params []string
	switch sp.kind {
	case HNSW:
		if m := sp.ann.M; m > 0 {
			params = append(params, fmt.Sprintf("m=%d", m))
		}
		if efc := sp.ann.EFConstruction; efc > 0 {
			params = append(params, fmt.Sprintf("ef_construction=%d", efc))
		}
	case IVFFlat:
		if lists := sp.ann.Lists; lists > 0 {
			params = append(params, fmt.Sprintf("lists=%d", lists))
		}
	default:
		return ""
	}
	var with string
	if len(params) > 0 {
		with = " WITH (" + strings.Join(params, ", ") + ")"
	}
	return fmt.Sprintf("CREATE INDEX CONCURRENTLY IF NOT EXISTS store_vectors_embedding_idx ON %s USING %s (embedding %s)%s",
		t.vectors, sp.kind, sp.opsClass, with)
}
