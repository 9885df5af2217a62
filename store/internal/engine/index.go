package engine

import (
	"context"
	"slices"
	"time"

	"github.com/memvault/memvault/store"
	"github.com/memvault/memvault/store/internal/vecindex"
)

// IndexTx is what a transaction of a driver that declares
// store.DriverCaps.CodeIndex offers the engine's code index beyond
// store.DriverTx: one consistent read of the index's data (vecindex.Source
// and IndexState), the vectors of given items for exact rescoring, and, in
// a write transaction, the generation of the write and a hook run at
// commit. The driver stores what the engine hands it (Vector.Code) and
// decides nothing: codes, centres and rankings are the engine's.
type IndexTx interface {
	vecindex.Source
	// IndexState reads the generation, the codes' generation, the log's
	// floor and the codes' coverage as this transaction sees them.
	IndexState(ctx context.Context) (vecindex.State, error)
	// VectorsOf calls fn once per item of keys (expired or not) that has
	// vectors, with all of them (see store.DriverTx.Vectors).
	VectorsOf(ctx context.Context, keys []store.RowKey, fn func(k store.RowKey, updated time.Time, vs []store.Vector) error) error
	// Bump, in a write transaction, ends its changes to items: it
	// increments the generation, logs changed (or, with full, that every
	// item may have changed) under it, and returns it.
	Bump(ctx context.Context, changed []store.RowKey, full bool) (gen int64, err error)
	// OnCommit registers fn to run once the write transaction committed,
	// in the commit order of the storage's writers (never when it rolls
	// back).
	OnCommit(fn func())
}

// codeIndex is the engine's side of a driver's code index: the
// in-process index and the codes of a write.
type codeIndex struct {
	cache *vecindex.Cache
}

// newCodeIndex returns the code index of a store of dims dimensions
// within budget bytes (0: vecindex.DefaultBytes; negative: codes are
// written, the index is not used).
func newCodeIndex(budget int64, dims int) *codeIndex {
	switch {
	case budget < 0:
		budget = 0
	case budget == 0:
		budget = vecindex.DefaultBytes
	}
	return &codeIndex{cache: vecindex.New(budget, dims)}
}

// code fills the codes of a write's vectors around the driver's centre.
func (ci *codeIndex) code(ctx context.Context, itx IndexTx, vs []store.Vector, centre *[]float32, read *bool) error {
	if len(vs) == 0 {
		return nil
	}
	if !*read {
		c, _, err := itx.Quant(ctx)
		if err != nil {
			return err
		}
		*centre, *read = vecindex.CentreOf(c, ci.cache.Dims()), true
	}
	for i := range vs {
		vs[i].Code = vecindex.EncodeCode(vs[i].Vec, *centre)
	}
	return nil
}

// committed bumps the generation of a write transaction that changed
// items and hands the changes to the index at commit.
func (ci *codeIndex) committed(ctx context.Context, itx IndexTx, changes []vecindex.Change, ts time.Time, full bool) error {
	keys := make([]store.RowKey, len(changes))
	for i, ch := range changes {
		keys[i] = ch.Key
	}
	gen, err := itx.Bump(ctx, keys, full)
	if err != nil {
		return err
	}
	itx.OnCommit(func() { ci.cache.Committed(gen, changes, ts.UnixNano(), full) })
	return nil
}

// top returns the first need items of the exact ranking under prefix by
// the code index; ok is false when the index cannot answer (disabled, over
// budget, of other dimensions, behind the codes, or its bounds too loose),
// and the caller ranks by exact scan.
func (ci *codeIndex) top(ctx context.Context, tx store.DriverTx, prefix store.Namespace, qs *queries, need int) ([]vecindex.Scored, bool, error) {
	itx, ok := tx.(IndexTx)
	if !ok || !ci.cache.Enabled() || qs.dims != ci.cache.Dims() {
		return nil, false, nil
	}
	st, err := itx.IndexState(ctx)
	if err != nil || st.CodesGen != st.Gen {
		return nil, false, err
	}
	if ok, err := ci.cache.Refresh(ctx, itx, st); !ok || err != nil {
		return nil, false, err
	}
	return ci.cache.Top(ctx, st.Gen, prefix.String(), rescorer{qs, itx, ci.cache.Dims()}, need)
}

// rescorer is a search's exact scoring for the index (vecindex.Rescorer).
type rescorer struct {
	*queries
	itx  IndexTx
	dims int
}

func (r rescorer) Rescore(ctx context.Context, keys []vecindex.Key) ([]vecindex.Scored, error) {
	cands := make([]vecindex.Scored, 0, len(keys))
	err := r.itx.VectorsOf(ctx, keys, func(k store.RowKey, updated time.Time, vs []store.Vector) error {
		// As the index: only vectors of this configuration.
		other := func(v store.Vector) bool { return len(v.Vec) != r.dims }
		if slices.ContainsFunc(vs, other) {
			vs = slices.DeleteFunc(slices.Clone(vs), other)
		}
		if len(vs) == 0 {
			return nil
		}
		sq, err := r.resolve(ctx, k.NS)
		if err != nil || sq == nil {
			return err // nil: its subject's keys are gone
		}
		cands = append(cands, vecindex.Scored{Key: k, Updated: updated.UnixNano(), Score: bestScore(sq, vs)})
		return nil
	})
	slices.SortFunc(cands, vecindex.CompareScored)
	return cands, err
}
