package engine

import (
	"context"
	"errors"
	"slices"
	"sync/atomic"
	"time"

	"github.com/memvault/memvault/store"
	"github.com/memvault/memvault/store/vecindex"
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

// IndexWriter is what a write transaction of a driver that keeps its code
// index's data for other processes (a snapshot, the codes' coverage, a
// centre) offers beyond IndexTx. The engine decides when and what; the
// driver stores it. A driver without it (store/memstore) keeps no snapshot
// and never centres its codes.
type IndexWriter interface {
	// PutSnapshot replaces the stored snapshot with parts, the index of
	// generation gen (vecindex.Cache.TakeSnapshot), when gen is still the
	// storage's generation and its codes'; it reports whether it did.
	PutSnapshot(ctx context.Context, gen int64, parts [][]byte) (bool, error)
	// PutCoverage stores cov as the coverage of the items with codes when
	// gen is still the storage's generation and its codes'; it reports
	// whether it did.
	PutCoverage(ctx context.Context, gen int64, cov vecindex.Coverage) (bool, error)
	// CountCoverage counts the coverage of the items with codes and stores
	// it (codes written before the storage kept it).
	CountCoverage(ctx context.Context) error
	// CodedItems returns how many items have codes, as the write
	// transaction sees them: the coverage it keeps (vecindex.Coverage's
	// Items), which costs no read, or a count where the storage has none.
	CodedItems(ctx context.Context) (int64, error)
	// SampleVectors calls fn with up to limit stored vectors (any of
	// them), each valid only during the call.
	SampleVectors(ctx context.Context, limit int, fn func(v []float32)) error
	// Recode replaces every stored code with code(vector) (no code when
	// it returns nil), stores centre (nil: none) as the codes' centre and
	// their coverage, records the codes complete for generation gen and
	// drops the snapshot.
	Recode(ctx context.Context, gen int64, centre []float32, code func(v []float32) []byte) error
}

const (
	// centreMin is how many vectors the centre is computed from once
	// there are that many: until then codes are uncentred. A write checks
	// it on the items with codes (each has one vector or more), which the
	// driver keeps as it writes, not on a count of the code rows.
	centreMin = 1024
	// centreSample bounds the vectors read to compute the centre.
	centreSample = 4096
)

// codeIndex is the engine's side of a driver's code index: the
// in-process index, the exact float copy of a small store, and the codes
// of a write.
type codeIndex struct {
	cache  *vecindex.Cache
	floats *floatCache // nil without (Options.FloatBytes)
	// writer: the driver's transactions are IndexWriters (seen once):
	// only then is a snapshot worth serializing.
	writer atomic.Bool
}

// newCodeIndex returns the code index of a store of dims dimensions
// within budget bytes (0: vecindex.DefaultBytes; negative: codes are
// written, the index is not used), with an exact copy of vectors within
// floatBytes (0: none) while the index is used.
func newCodeIndex(budget int64, dims int, floatBytes int64) *codeIndex {
	switch {
	case budget < 0:
		budget = 0
	case budget == 0:
		budget = vecindex.DefaultBytes
	}
	ci := &codeIndex{cache: vecindex.New(budget, dims)}
	if budget > 0 && floatBytes > 0 {
		ci.floats = &floatCache{budget: floatBytes, dims: dims}
	}
	return ci
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
// items and hands the changes to the index and the float copy at commit.
// uncentred: the write coded vectors without a centre; once there are
// centreMin codes and they are complete, every vector is recoded around
// their mean (by a driver that is an IndexWriter): once centreMin items
// have codes.
func (ci *codeIndex) committed(ctx context.Context, itx IndexTx, changes []vecindex.Change, ts time.Time, full, uncentred bool) error {
	w, _ := itx.(IndexWriter)
	ci.writer.Store(w != nil)
	recode := false
	if uncentred && !full && w != nil {
		n, err := w.CodedItems(ctx)
		if err != nil {
			return err
		}
		if n >= centreMin {
			st, err := itx.IndexState(ctx)
			if err != nil {
				return err
			}
			recode = st.CodesGen == st.Gen
			full = recode
		}
	}
	keys := make([]store.RowKey, len(changes))
	for i, ch := range changes {
		keys[i] = ch.Key
	}
	gen, err := itx.Bump(ctx, keys, full)
	if err != nil {
		return err
	}
	if recode {
		if err := ci.recode(ctx, w, gen); err != nil {
			return err
		}
	}
	itx.OnCommit(func() {
		ci.cache.Committed(gen, changes, ts.UnixNano(), full)
		if ci.floats != nil {
			ci.floats.committed(gen, changes, ts.UnixNano(), full)
		}
	})
	return nil
}

// recode rewrites every code in w's transaction (generation gen), centred
// on the mean of (a sample of) the vectors of the index's dimensions when
// there are centreMin of them.
func (ci *codeIndex) recode(ctx context.Context, w IndexWriter, gen int64) error {
	dims := ci.cache.Dims()
	sum := make([]float64, dims)
	n := 0
	err := w.SampleVectors(ctx, centreSample, func(v []float32) {
		if len(v) == dims {
			for i, x := range v {
				sum[i] += float64(x)
			}
			n++
		}
	})
	if err != nil {
		return err
	}
	var centre []float32
	if n >= centreMin {
		centre = make([]float32, dims)
		for i := range centre {
			centre[i] = float32(sum[i] / float64(n))
		}
	}
	return w.Recode(ctx, gen, centre, func(v []float32) []byte { return vecindex.EncodeCode(v, centre) })
}

// errNoIndexTx is indexReader's error for a driver whose read transaction
// is not an IndexTx (the index is not used with it).
var errNoIndexTx = errors.New("read transaction without code index")

// indexReader opens a read transaction for the code index's work in the
// background (vecindex.Cache.SetReader: the middle parts of a snapshot
// load, read behind the search that loaded it).
func (e *Engine) indexReader(ctx context.Context) (vecindex.Source, func(), error) {
	tx, err := e.begin(ctx, false)
	if err != nil {
		return nil, nil, err
	}
	itx, ok := tx.(IndexTx)
	if !ok {
		_ = tx.Rollback()
		return nil, nil, errNoIndexTx
	}
	return itx, func() { _ = tx.Rollback() }, nil
}

// rank ranks a search's items with vectors under prefix for the engine:
// exact (ok) is every item scored exactly from the float copy of a small
// store; otherwise top is the first need items of the exact ranking by
// the code index (proved: nil when it cannot answer), and the caller ranks
// the rest by exact scan.
func (ci *codeIndex) rank(ctx context.Context, tx store.DriverTx, prefix store.Namespace, qs *queries, need int) (exact []vecindex.Scored, ok bool, top []vecindex.Scored, err error) {
	itx, isIndex := tx.(IndexTx)
	if !isIndex || qs.dims != ci.cache.Dims() {
		return nil, false, nil, nil
	}
	var st *vecindex.State
	if fs, isFS := tx.(FloatSource); isFS && ci.floats.enabled() {
		s, err := itx.IndexState(ctx)
		if err != nil {
			return nil, false, nil, err
		}
		st = &s
		if exact, ok, err = ci.floats.candidates(ctx, fs, s.Gen, prefix.String(), qs); ok || err != nil {
			return exact, ok, nil, err
		}
	}
	top, _, err = ci.top(ctx, itx, st, prefix, qs, need)
	return nil, false, top, err
}

// top returns the first need items of the exact ranking under prefix by
// the code index; ok is false when the index cannot answer (disabled, over
// budget, behind the codes, or its bounds too loose), and the caller ranks
// by exact scan. st is the transaction's index state when read already.
func (ci *codeIndex) top(ctx context.Context, itx IndexTx, st *vecindex.State, prefix store.Namespace, qs *queries, need int) ([]vecindex.Scored, bool, error) {
	if !ci.cache.Enabled() {
		return nil, false, nil
	}
	_, w := itx.(IndexWriter)
	ci.writer.Store(w)
	if st == nil {
		s, err := itx.IndexState(ctx)
		if err != nil {
			return nil, false, err
		}
		st = &s
	}
	if st.CodesGen != st.Gen {
		return nil, false, nil
	}
	if ok, err := ci.cache.Refresh(ctx, itx, *st); !ok || err != nil {
		return nil, false, err
	}
	var r vecindex.Rescorer = rescorer{qs, itx, ci.cache.Dims()}
	if fr, ok := itx.(vecindex.FineReader); ok {
		r = fineRescorer{r.(rescorer), fr}
	}
	return ci.cache.Top(ctx, st.Gen, prefix.String(), r, need)
}

// fineRescorer is rescorer for a driver whose transactions read the fine
// parts of codes alone (vecindex.FineReader).
type fineRescorer struct {
	rescorer
	fr vecindex.FineReader
}

// Fines reads the fine parts of the codes of keys in the search's read.
func (r fineRescorer) Fines(ctx context.Context, keys []vecindex.Key, fn func(k vecindex.Key, fine []byte)) error {
	return r.fr.Fines(ctx, keys, fn)
}

// rescorer is a search's exact scoring for the index (vecindex.Rescorer).
type rescorer struct {
	*queries
	itx  IndexTx
	dims int
}

// Codes reads the stored codes of keys in the search's read, so that the
// index bounds its candidates by their fine parts (vecindex.CodeReader).
func (r rescorer) Codes(ctx context.Context, keys []vecindex.Key, fn func(k vecindex.Key, updated int64, code []byte)) error {
	return r.itx.Codes(ctx, keys, fn)
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

// maintainIndex stores what the last loads of the index asked for: the
// coverage of the code rows a load counted when the stored one differs,
// and the index as the snapshot. It is an optimisation of later opens:
// its failure leaves the previous snapshot (or none) and coverage, which
// loads remain correct with, and is not the caller's error.
func (e *Engine) maintainIndex(ctx context.Context) {
	ci := e.ci
	if ci == nil || !ci.writer.Load() {
		return
	}
	if r := ci.cache.TakeRepair(); r != nil {
		done := false
		err := e.update(ctx, func(tx store.DriverTx) (err error) {
			if w, ok := tx.(IndexWriter); ok {
				done, err = w.PutCoverage(ctx, r.Gen, r.Real)
			}
			return err
		})
		if err == nil && done {
			ci.cache.Repaired(r)
		}
	}
	if gen, parts, ok := ci.cache.TakeSnapshot(); ok {
		_ = e.update(ctx, func(tx store.DriverTx) error {
			if w, ok := tx.(IndexWriter); ok {
				_, err := w.PutSnapshot(ctx, gen, parts)
				return err
			}
			return nil
		})
	}
}

// putSnapshotBehind stores the index's snapshot (take) when the driver
// is an IndexWriter that holds none, behind a write that deleted items
// (vecindex.SnapshotWriter). A driver that keeps its snapshot across
// deletes holds one: nothing is serialized.
func (e *Engine) putSnapshotBehind(ctx context.Context, take func() (int64, [][]byte, bool)) (bool, error) {
	if !e.ci.writer.Load() {
		return true, nil // no snapshot to keep
	}
	tx, err := e.begin(ctx, false)
	if err != nil {
		return false, err
	}
	var snapGen int64 = -1
	if itx, ok := tx.(IndexTx); ok {
		_, snapGen, err = itx.Quant(ctx)
	}
	if err = end(tx, err); err != nil || snapGen >= 0 {
		return err == nil, err
	}
	gen, parts, ok := take()
	if !ok {
		return false, nil
	}
	held := false
	err = e.update(ctx, func(tx store.DriverTx) (err error) {
		if w, ok := tx.(IndexWriter); ok {
			held, err = w.PutSnapshot(ctx, gen, parts)
		}
		return err
	})
	return held, err
}

// SyncCodes recodes every vector of e's driver when the codes are not
// complete for the storage's generation (a build that wrote no codes
// wrote items), and counts the codes' coverage when the storage has none
// yet; searches rank by exact scan until then. A driver calls it when it
// opens; it does nothing without a code index or an IndexWriter.
func SyncCodes(ctx context.Context, e *Engine) error {
	if e.ci == nil {
		return nil
	}
	synced := func(tx store.DriverTx) (IndexTx, IndexWriter, vecindex.State, bool, error) {
		itx, ok := tx.(IndexTx)
		w, isW := tx.(IndexWriter)
		if !ok || !isW {
			return nil, nil, vecindex.State{}, true, nil
		}
		st, err := itx.IndexState(ctx)
		return itx, w, st, err == nil && st.CodesGen == st.Gen && st.Stored.Known, err
	}
	tx, err := e.begin(ctx, false)
	if err != nil {
		return e.errorf("coding vectors: %w", err)
	}
	_, _, _, done, err := synced(tx)
	if err = end(tx, err); err != nil || done {
		return err
	}
	err = e.update(ctx, func(tx store.DriverTx) error {
		itx, w, st, done, err := synced(tx)
		if err != nil || done {
			return err // nil: another process did it
		}
		if st.CodesGen == st.Gen {
			// The codes are complete: count their coverage, no new
			// generation (nothing else changes).
			return w.CountCoverage(ctx)
		}
		gen, err := itx.Bump(ctx, nil, true)
		if err != nil {
			return err
		}
		return e.ci.recode(ctx, w, gen)
	})
	if err != nil {
		return e.errorf("coding vectors: %w", err)
	}
	return nil
}

// IndexCache returns e's code index (nil without one), for a driver's
// tests. Like IndexStats it is a function, not a method.
func IndexCache(e *Engine) *vecindex.Cache {
	if e.ci == nil {
		return nil
	}
	return e.ci.cache
}

// FloatsLoaded reports whether e's exact float copy is in memory (for
// tests).
func FloatsLoaded(e *Engine) bool { return e.ci != nil && e.ci.floats != nil && e.ci.floats.loaded() }

// Decoder returns e's decoding of a stored value column (the inverse of
// what the engine hands its driver), for a driver's operations beyond the
// seam.
func Decoder(e *Engine) func(ctx context.Context, ns, key string, raw []byte) (map[string]any, error) {
	return func(ctx context.Context, ns, key string, raw []byte) (map[string]any, error) {
		return e.vals.Decode(ctx, store.RowKey{NS: ns, Key: key}, raw)
	}
}
