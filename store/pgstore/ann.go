package pgstore

// ANNKind is the approximate-nearest-neighbour index of store_vectors.
type ANNKind string

const (
	// HNSW is pgvector's HNSW index (the default).
	HNSW ANNKind = "hnsw"
	// IVFFlat is pgvector's IVFFlat index.
	IVFFlat ANNKind = "ivfflat"
	// Flat means no ANN index: exact scan.
	Flat ANNKind = "flat"
)

// ANNConfig configures pgvector's index of store_vectors (Options.ANN);
// it applies only with Options.Index. Zero values take the documented
// defaults.
type ANNConfig struct {
	// Kind defaults to HNSW.
	Kind ANNKind
	// HalfVec stores vectors as halfvec (needed above 2000 dims for HNSW);
	// it is chosen automatically when Dims > 2000.
	HalfVec bool
	// M is HNSW's m (default 16).
	M int
	// EFConstruction is HNSW's ef_construction (default 64).
	EFConstruction int
	// EFSearch is HNSW's ef_search per query (default 40, raised to the
	// candidate count when that is larger).
	EFSearch int
	// Lists is IVFFlat's lists (default 100).
	Lists int
	// Probes is IVFFlat's probes per query (default 1).
	Probes int
}
