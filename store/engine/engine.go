package engine

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync/atomic"
	"time"

	"github.com/memvault/memvault/internal/binding"
	"github.com/memvault/memvault/jsonvalue"
	"github.com/memvault/memvault/serde"
	"github.com/memvault/memvault/store"
	"github.com/memvault/memvault/store/internal/filtering"
	"github.com/memvault/memvault/store/internal/indexing"
	"github.com/memvault/memvault/store/internal/items"
	"github.com/memvault/memvault/store/vecindex"
)

// Options configures an Engine.
type Options struct {
	Index *store.IndexConfig
	TTL   *store.TTLConfig
	// Serde, when set, encodes values: the driver then stores envelopes
	// sealed to their item (see store.Driver). nil stores plain JSON (or,
	// for a driver with DriverCaps.InProcessValues, the values themselves).
	Serde serde.Serializer
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// VectorIndexBytes bounds the in-process code index of a driver that
	// declares store.DriverCaps.CodeIndex (see package vecindex): 0 means
	// vecindex.DefaultBytes, negative disables it (codes are still
	// written, and searches score every vector).
	VectorIndexBytes int64
	// ValueCacheSize is how many opened values the engine keeps, each
	// checked against the exact stored bytes before use (see cache.go),
	// for a driver whose rows come from outside the process; 0: none.
	ValueCacheSize int
	// FloatBytes, when positive, keeps an exact in-process copy of the
	// vectors of a store whose vectors fit in this many bytes, beside the
	// code index (while it is enabled), for a driver whose transactions
	// are FloatSources: searches then score every vector from memory.
	FloatBytes int64
}

// Engine is a store.Store (with Sweeper, ConditionalPutter, Lister and
// PrefixDeleter) on a driver. It is safe for concurrent use as far as its
// driver is.
type Engine struct {
	// front is the core's side of the public methods that are one-op
	// batches or checked storage operations (see front.go): a field, not
	// an embedding, so that the engine's exported API names no internal
	// type.
	front *items.Front
	b     *items.Base
	d     store.Driver
	caps  store.DriverCaps
	vals  values
	// docs: the driver keeps values as maps (DriverCaps.InProcessValues
	// without serializer).
	docs bool
	// ci is the code index of an indexed store on a driver that keeps
	// codes (DriverCaps.CodeIndex); nil otherwise.
	ci *codeIndex
	// cache keeps opened values (Options.ValueCacheSize); nil: none.
	cache *valueCache
	// exact counts the searches a driver's ANN could not settle (see
	// ExactSearches).
	exact atomic.Int64
}

var _ items.Complete = (*Engine)(nil)

// New returns the engine of d and starts its sweeper. It fails with
// store.ErrInvalidArgument for invalid options (see items.NewConfig); d is
// not closed then.
func New(d store.Driver, opt Options) (*Engine, error) {
	b, err := items.NewBase(d.Name(), opt.Index, opt.TTL, opt.Now)
	if err != nil {
		return nil, err
	}
	b.UseSerializer(opt.Serde)
	e := &Engine{b: b, d: d, caps: d.Caps(), vals: newValues(d.Name(), opt.Serde)}
	if e.caps.StatementReads && !e.caps.UpsertVersions {
		return nil, fmt.Errorf("%s: %w", d.Name(), errStatementReads)
	}
	e.docs = e.caps.InProcessValues && opt.Serde == nil
	e.cache = newValueCache(opt.ValueCacheSize)
	if e.caps.CodeIndex && b.Index != nil {
		e.ci = newCodeIndex(opt.VectorIndexBytes, b.Index.Dims, opt.FloatBytes)
		e.ci.cache.SetReader(e.indexReader)
		e.ci.cache.SetSnapshotWriter(e.putSnapshotBehind)
	}
	e.front = items.NewFront(b, items.Hooks{Batch: e.Batch, ListItems: e.listItems, DeletePrefix: e.deletePrefix})
	b.StartSweeper(e.Sweep)
	return e, nil
}

// IndexStats returns the counters of e's code index (nil without one), for
// tests. It is a function, not a method, so that it does not become one of
// the stores that embed an Engine.
func IndexStats(e *Engine) *vecindex.Stats {
	if e.ci == nil {
		return nil
	}
	return &e.ci.cache.Stats
}

// Close stops the sweeper, closes the driver and makes every later call
// fail with store.ErrClosed. It is safe to call more than once.
func (e *Engine) Close() error {
	if e.ci != nil {
		// Before the driver: a fill of the index holds a read of it.
		e.ci.cache.Close()
	}
	return e.b.Close(e.d.Close)
}

// errorf prefixes err with the driver's name, unless the message has it
// already (the core's checks prefix their errors).
func (e *Engine) errorf(format string, args ...any) error {
	err := fmt.Errorf(format, args...)
	if strings.HasPrefix(err.Error(), e.b.Driver+": ") {
		return err
	}
	return fmt.Errorf("%s: %w", e.b.Driver, err)
}

// begin starts a transaction of the driver and refuses to go on when the
// store was closed meanwhile.
func (e *Engine) begin(ctx context.Context, write bool) (store.DriverTx, error) {
	tx, err := e.d.Begin(ctx, write)
	if err != nil {
		return nil, err
	}
	if err := e.b.Check(ctx); err != nil {
		_ = tx.Rollback()
		return nil, err
	}
	return tx, nil
}

// end commits tx when err is nil and rolls it back otherwise.
func end(tx store.DriverTx, err error) error {
	if err != nil {
		_ = tx.Rollback()
		return err
	}
	return tx.Commit()
}

// update runs fn in a write transaction.
func (e *Engine) update(ctx context.Context, fn func(store.DriverTx) error) error {
	tx, err := e.begin(ctx, true)
	if err != nil {
		return err
	}
	return end(tx, fn(tx))
}

// Sweep deletes the items expired at the store's current time and returns
// how many it deleted.
func (e *Engine) Sweep(ctx context.Context) (int, error) {
	if err := e.b.Check(ctx); err != nil {
		return 0, err
	}
	var n int
	err := e.update(ctx, func(tx store.DriverTx) error {
		now := e.b.Now()
		gone, err := tx.DeleteExpired(ctx, now)
		if n = len(gone); err != nil || n == 0 {
			return err
		}
		itx, err := e.indexTx(tx)
		if itx == nil {
			return err
		}
		changes := make([]vecindex.Change, n)
		for i, k := range gone {
			changes[i] = vecindex.Change{Key: k, Deleted: true}
		}
		return e.ci.committed(ctx, itx, changes, now, false, false)
	})
	if err != nil {
		return 0, e.errorf("sweep: %w", err)
	}
	return n, nil
}

// write is a prepared write: the core's Put, its row's key and its value
// as stored (nil: Value itself, for a driver that keeps maps), with the
// fence of the key that sealed it.
type write struct {
	*items.Put
	k     store.RowKey
	value []byte
	fence binding.Fence
}

// prepare encodes (and seals) a put's value before any transaction.
func (e *Engine) prepare(ctx context.Context, p *items.Put) (*write, error) {
	w := &write{Put: p, k: store.RowKey{NS: p.Prefix, Key: p.Key}}
	if p.Value != nil && !e.docs {
		var err error
		if w.value, err = e.vals.Encode(ctx, w.k, p.Value, &w.fence); err != nil {
			return nil, err
		}
	}
	return w, nil
}

// indexTx returns the code index's side of tx (nil without code index).
func (e *Engine) indexTx(tx store.DriverTx) (IndexTx, error) {
	if e.ci == nil {
		return nil, nil
	}
	itx, ok := tx.(IndexTx)
	if !ok {
		return nil, fmt.Errorf("driver declares a code index, its transaction %T is not an engine.IndexTx", tx)
	}
	return itx, nil
}

// changedAll records, for the code index, that a write transaction may
// have deleted any item (a prefix deleted): the index reloads.
func (e *Engine) changedAll(ctx context.Context, tx store.DriverTx, now time.Time) error {
	itx, err := e.indexTx(tx)
	if itx == nil {
		return err
	}
	return e.ci.committed(ctx, itx, nil, now, true, false)
}

// refresh is an item whose TTL a read refreshed.
type refresh struct {
	k   store.RowKey
	exp time.Time
}

// Batch runs ops: every read sees the state before the batch's writes, and
// of several writes to one key the last wins. Embedding and sealing run
// before the driver is touched; a batch with writes is one write
// transaction, a read-only batch one read-only transaction (and a write
// transaction for the TTLs it refreshes, unless the driver can refresh in
// a read-only one).
func (e *Engine) Batch(ctx context.Context, ops []store.Op) ([]store.Result, error) {
	plan, puts, err := items.StartBatch(ctx, e.b, ops, e.prepare)
	if err != nil {
		return nil, err
	}
	now := e.b.Now()
	results := make([]store.Result, len(ops))
	writes := len(puts) > 0
	tx, err := e.begin(ctx, writes)
	if err != nil {
		return nil, e.errorf("%w", err)
	}
	var refreshes []refresh
	for i, op := range ops {
		switch o := op.(type) {
		case store.GetOp:
			results[i].Item, err = e.get(ctx, tx, store.RowKey{NS: o.Namespace.String(), Key: o.Key}, now, e.b.Refresh(o.RefreshTTL), &refreshes)
		case store.SearchOp:
			results[i].Items, err = e.search(ctx, tx, o.Prefix, o.Options, plan.Queries[o.Options.Query], now, &refreshes)
		case store.ListNamespacesOp:
			results[i].Namespaces, err = e.listNamespaces(ctx, tx, o.Options, now)
		}
		if err != nil {
			err = fmt.Errorf("op %d: %w", i, err)
			break
		}
	}
	if err == nil && (writes || e.caps.RefreshInView) {
		err = applyRefreshes(ctx, tx, refreshes)
		refreshes = nil
	}
	if err == nil && writes {
		err = e.apply(ctx, tx, puts, now)
	}
	if err = end(tx, err); err == nil {
		e.maintainIndex(ctx)
		err = e.refreshAfter(ctx, refreshes)
	}
	e.refused(err, puts)
	if e.ci != nil {
		// The middle parts a load from the snapshot left to read behind
		// the batch's searches (vecindex.Cache.StartFill): after them.
		e.ci.cache.StartFill()
	}
	if err != nil {
		return nil, e.errorf("%w", err)
	}
	return results, nil
}

// refreshAfter applies the TTL refreshes of a read-only transaction in a
// write transaction of their own.
func (e *Engine) refreshAfter(ctx context.Context, rs []refresh) error {
	if len(rs) == 0 {
		return nil
	}
	return e.update(ctx, func(tx store.DriverTx) error { return applyRefreshes(ctx, tx, rs) })
}

// Get returns the item at (ns, key), or nil when there is none (see
// store.Store): a one-op batch without the batch's bookkeeping.
func (e *Engine) Get(ctx context.Context, ns store.Namespace, key string, opts ...store.GetOption) (*store.Item, error) {
	if err := e.b.Check(ctx); err != nil {
		return nil, err
	}
	if err := ns.Validate(); err != nil {
		return nil, e.errorf("%w", err)
	}
	if err := store.ValidateKey(key); err != nil {
		return nil, e.errorf("%w", err)
	}
	o := items.ResolveGet(opts)
	now, refreshTTL := e.b.Now(), e.b.Refresh(o.RefreshTTL)
	tx, err := e.begin(ctx, false)
	if err != nil {
		return nil, e.errorf("%w", err)
	}
	var refreshes []refresh
	it, err := e.get(ctx, tx, store.RowKey{NS: ns.String(), Key: key}, now, refreshTTL, &refreshes)
	if err == nil && e.caps.RefreshInView {
		err = applyRefreshes(ctx, tx, refreshes)
		refreshes = nil
	}
	if err = end(tx, err); err == nil {
		err = e.refreshAfter(ctx, refreshes)
	}
	if err != nil {
		return nil, e.errorf("%w", err)
	}
	return it, nil
}

// refused forgets the cached keys of puts' subjects when err refused
// their write as an erasure's (binding.Codec.Refused: a SQL fence's
// refusal, which keys.Hierarchy does not see).
func (e *Engine) refused(err error, puts []*write) {
	if err == nil || e.vals.serde == nil {
		return
	}
	var fence binding.Fence
	for _, p := range puts {
		fence.Merge(&p.fence)
	}
	e.vals.codec.Refused(err, &fence)
}

func applyRefreshes(ctx context.Context, tx store.DriverTx, rs []refresh) error {
	for _, r := range rs {
		if err := tx.Refresh(ctx, r.k, r.exp); err != nil {
			return err
		}
	}
	return nil
}

// apply performs a batch's writes in tx, after checking the fence of the
// keys that sealed their values (an erasure that destroyed one of them
// fails the batch: binding.Fence). A replaced item keeps its CreatedAt,
// and its UpdatedAt moves forward even within one clock tick, so that it
// names a version (store.PutCondition).
func (e *Engine) apply(ctx context.Context, tx store.DriverTx, puts []*write, now time.Time) error {
	if err := e.b.Check(ctx); err != nil {
		return err
	}
	if e.vals.serde != nil {
		var fence binding.Fence
		for _, p := range puts {
			fence.Merge(&p.fence)
		}
		if err := e.fence(ctx, tx, &fence); err != nil {
			return err
		}
	}
	if err := e.record(ctx, tx); err != nil {
		return err
	}
	itx, err := e.indexTx(tx)
	if err != nil {
		return err
	}
	var (
		changes []vecindex.Change // for the code index
		centre  []float32
		coded   bool // centre read
	)
	prior, err := e.priorVersions(ctx, tx, puts)
	if err != nil {
		return err
	}
	for _, p := range puts {
		if p.Value == nil {
			if err := tx.Delete(ctx, p.k); err != nil {
				return err
			}
			delete(prior, p.k)
			if itx != nil {
				changes = append(changes, vecindex.Change{Key: p.k, Deleted: true})
			}
			continue
		}
		w := store.RowWrite{Row: store.Row{RowKey: p.k, Namespace: p.Namespace, Value: p.value,
			Created: now, Updated: now, TTLMinutes: items.TTLMinutes(p.TTL)}, Reindex: p.Reindex}
		if e.docs {
			w.Doc = p.Value // a private copy (items.Prepare)
		}
		if p.TTL > 0 {
			w.Expires = now.Add(p.TTL)
		}
		if !e.caps.UpsertVersions { // else the driver's Put keeps them
			old, ok, err := priorVersion(ctx, tx, prior, p.k)
			if err != nil {
				return err
			}
			if ok {
				w.Created = old.Created
				if !w.Updated.After(old.Updated) {
					w.Updated = old.Updated.Add(time.Nanosecond)
				}
			}
			if prior != nil { // a later put of the key in this batch replaces this one
				prior[p.k] = version{w.Created, w.Updated}
			}
		}
		if p.Reindex && len(p.Vectors) > 0 {
			w.Vectors = make([]store.Vector, len(p.Vectors))
			for i, v := range p.Vectors {
				w.Vectors[i] = store.Vector{Field: p.Texts[i].Field, Vec: v, Norm: indexing.VectorNorm(v)}
			}
		}
		if itx != nil && p.Reindex {
			if err := e.ci.code(ctx, itx, w.Vectors, &centre, &coded); err != nil {
				return err
			}
			ch := vecindex.Change{Key: p.k, Codes: make([][]byte, len(w.Vectors)), Vectors: p.Vectors}
			for i, v := range w.Vectors {
				ch.Codes[i] = v.Code
			}
			changes = append(changes, ch)
		}
		if err := tx.Put(ctx, w); err != nil {
			return err
		}
	}
	if itx != nil {
		return e.ci.committed(ctx, itx, changes, now, false, coded && centre == nil)
	}
	return nil
}

// RecordTx is a write transaction that inserts an audit record with its
// rows (store.DriverCaps.TxRecords): in the same commit, before them.
type RecordTx interface {
	Record(ctx context.Context, r *store.RecordRow) error
}

// RecordsInTx implements store.TxRecorder: a write whose context carries
// an audit record (store.WithRecord) inserts it in its own transaction
// when the driver can.
func (e *Engine) RecordsInTx() bool { return e.caps.TxRecords }

// record inserts the audit records ctx carries, if any, in tx; a write
// that carries one to a driver that cannot insert it fails (it must not
// happen unrecorded).
func (e *Engine) record(ctx context.Context, tx store.DriverTx) error {
	rs := store.RecordsOf(ctx)
	if len(rs) == 0 {
		return nil
	}
	rt, ok := tx.(RecordTx)
	if !ok || !e.caps.TxRecords {
		return fmt.Errorf("the write carries an audit record, which this driver cannot insert in its transaction: %w", errors.ErrUnsupported)
	}
	for _, r := range rs {
		if err := rt.Record(ctx, r); err != nil {
			return err
		}
	}
	return nil
}

// version is what a replacing put keeps of the row it replaces.
type version struct{ Created, Updated time.Time }

// priorVersions reads, in one request, the stored rows the batch's puts
// replace, when the driver's Put does not keep their versions itself
// (store.DriverCaps.UpsertVersions): one Get per put made a 200-item batch
// 200 round trips on a networked storage. Nil when the driver keeps them,
// or for a single put, which priorVersion then reads with one Get.
func (e *Engine) priorVersions(ctx context.Context, tx store.DriverTx, puts []*write) (map[store.RowKey]version, error) {
	if e.caps.UpsertVersions || len(puts) < 2 {
		return nil, nil
	}
	keys := make([]store.RowKey, 0, len(puts))
	for _, p := range puts {
		if p.Value != nil {
			keys = append(keys, p.k)
		}
	}
	prior := make(map[store.RowKey]version, len(keys))
	if len(keys) == 0 {
		return prior, nil
	}
	rows, err := tx.Rows(ctx, keys, nil)
	if err != nil {
		return nil, err
	}
	for _, r := range rows {
		prior[r.RowKey] = version{r.Created, r.Updated}
	}
	return prior, nil
}

// priorVersion returns the version of the row at k that a put replaces:
// from prior when the batch read them, else from tx.
func priorVersion(ctx context.Context, tx store.DriverTx, prior map[store.RowKey]version, k store.RowKey) (version, bool, error) {
	if prior != nil {
		v, ok := prior[k]
		return v, ok, nil
	}
	r, ok, err := tx.Get(ctx, k)
	return version{r.Created, r.Updated}, ok, err
}

// open returns the value of a row for a caller: a copy of the driver's map,
// or the stored bytes opened.
func (e *Engine) open(ctx context.Context, r *store.Row) (map[string]any, error) {
	if r.Value == nil && r.Doc != nil {
		return jsonvalue.Copy(r.Doc).(map[string]any), nil
	}
	v, err := e.decode(ctx, r)
	if err != nil {
		return nil, fmt.Errorf("item %q/%q: %w", r.NS, r.Key, err)
	}
	return v, nil
}

// item turns a live row into the item a read returns, with its value v
// (nil: opened here), refreshing its TTL when asked (the refresh is
// recorded for the caller to apply).
func (e *Engine) item(ctx context.Context, r *store.Row, v map[string]any, now time.Time, refreshTTL bool, refreshes *[]refresh) (store.Item, error) {
	if v == nil {
		var err error
		if v, err = e.open(ctx, r); err != nil {
			return store.Item{}, err
		}
	}
	loc := now.Location()
	it := store.Item{Namespace: r.Namespace.Clone(), Key: r.Key, Value: v,
		CreatedAt: r.Created.In(loc), UpdatedAt: r.Updated.In(loc)}
	if it.Namespace == nil {
		it.Namespace = store.ParseNamespace(r.NS)
	}
	exp := r.Expires
	if refreshTTL && r.TTLMinutes > 0 {
		exp = now.Add(items.RefreshTTL(r.TTLMinutes))
		*refreshes = append(*refreshes, refresh{r.RowKey, exp})
	}
	if !exp.IsZero() {
		it.ExpiresAt = exp.In(loc)
	}
	return it, nil
}

func (e *Engine) get(ctx context.Context, tx store.DriverTx, k store.RowKey, now time.Time, refreshTTL bool, refreshes *[]refresh) (*store.Item, error) {
	r, ok, err := tx.Get(ctx, k)
	if err != nil || !ok || items.Expired(r.Expires, now) {
		return nil, err
	}
	it, err := e.item(ctx, &r, nil, now, refreshTTL, refreshes)
	if err != nil {
		return nil, err
	}
	return &it, nil
}

// search runs one search. Without a query vector it lists items most
// recently updated first (then by namespace and key); with one it scores
// every vector under the prefix against the query in the vector's space
// (see package spaces), keeps each item's best field, and returns scored
// items best first, then unscored items in the no-query order, offset and
// limit applying to that combined list. Vectors of a data subject whose
// keys are gone score nothing, and their items are left out.
func (e *Engine) search(ctx context.Context, tx store.DriverTx, prefix store.Namespace, opt store.SearchOptions, query []float32, now time.Time, refreshes *[]refresh) ([]store.SearchItem, error) {
	need := opt.Offset + opt.EffectiveLimit()
	refreshTTL := e.b.Refresh(opt.RefreshTTL)
	filter, err := filtering.CompileFilter(opt.Filter) // checked by the plan
	if err != nil {
		return nil, err
	}
	out := make([]store.SearchItem, 0, min(opt.EffectiveLimit(), 1024))
	seen := 0
	// take handles a live row in list order; it reports false when the
	// page is full.
	take := func(r *store.Row, score *float64) (bool, error) {
		if seen >= need {
			return false, nil
		}
		var v map[string]any // the value, when opening it was needed
		if len(opt.Filter) > 0 {
			doc := r.Doc
			if r.Value != nil || doc == nil {
				var err error
				if v, err = e.open(ctx, r); err != nil {
					return false, err
				}
				doc = v
			}
			if !filter.Match(doc) {
				return true, nil
			}
		}
		seen++
		if seen > opt.Offset {
			it, err := e.item(ctx, r, v, now, refreshTTL, refreshes)
			if err != nil {
				return false, err
			}
			out = append(out, store.SearchItem{Item: it, Score: score})
		}
		return seen < need, nil
	}
	if query != nil {
		qs, err := newQueries(ctx, e.b, prefix, query)
		if err != nil {
			return nil, err
		}
		if page, ok, err := e.ann(ctx, tx, prefix, opt, qs, filter, now, refreshTTL, refreshes); ok || err != nil {
			return page, err
		}
		// Rounds of a bounded selection: the best k scored items after the
		// last one taken (the order is total), until the page is full or
		// no item is left; more than one round only when the filter or
		// expiries reject most of the best.
		var (
			last *vecindex.Scored
			// before is how many items rank up to last.
			before int
			keys   []store.RowKey
			rows   []store.Row
		)
		// takeRanked takes the items of ranked, best first, until the page
		// is full (more false).
		takeRanked := func(ranked []vecindex.Scored) (more bool, err error) {
			more = true
			for start := 0; more && start < len(ranked); {
				// Without a filter only expiries reject items: read as
				// many as the page lacks.
				chunk := need - seen
				if len(opt.Filter) > 0 {
					chunk = max(2*chunk, 32)
				}
				part := ranked[start:min(len(ranked), start+chunk)]
				start += len(part)
				keys = keys[:0]
				if rows == nil {
					rows = make([]store.Row, 0, len(part))
				}
				for _, c := range part {
					keys = append(keys, c.Key)
				}
				if rows, err = tx.Rows(ctx, keys, rows[:0]); err != nil {
					return false, err
				}
				find := rowFinder(rows)
				for _, c := range part {
					i := find(c.Key)
					if i < 0 || items.Expired(rows[i].Expires, now) {
						continue
					}
					score := c.Score
					if more, err = take(&rows[i], &score); err != nil || !more {
						return false, err
					}
				}
			}
			return more, nil
		}
		more := qs != nil
		var exact []vecindex.Scored // every item scored, from the float copy
		if more && e.ci != nil {
			// The float copy scores every item; the code index proves the
			// exact ranking's first items, and the rounds below continue
			// after them when the page needs more.
			var top []vecindex.Scored
			if exact, _, top, err = e.ci.rank(ctx, tx, prefix, qs, need); err != nil {
				return nil, err
			}
			if len(top) > 0 {
				if more, err = takeRanked(top); err != nil {
					return nil, err
				}
				last, before = &top[len(top)-1], len(top)
			}
		}
		for k := max(4*need, 64); more; k *= 4 {
			top, n, err := e.score(ctx, tx, prefix, qs, now, k, last, before, exact)
			if err != nil {
				return nil, err
			}
			ranked := top.Sorted()
			if more, err = takeRanked(ranked); err != nil {
				return nil, err
			}
			if n <= k || len(ranked) == 0 {
				break
			}
			last, before = &ranked[len(ranked)-1], before+len(ranked)
		}
		if seen >= need {
			return out, nil
		}
	}
	// The items without vectors (all of them without a query), a page at
	// a time: with a filter, pages grow as it rejects rows.
	var after *store.ScanAfter
	for limit := max(need-seen, 1); ; limit = min(4*limit, 4096) {
		if len(opt.Filter) > 0 {
			limit = max(limit, 64)
		}
		page, err := e.scan(ctx, tx, prefix, now, query != nil, after, limit, opt.Filter)
		if err != nil {
			return nil, err
		}
		for i := range page {
			more, err := take(&page[i], nil)
			if err != nil || !more {
				return out, err
			}
		}
		if len(page) < limit {
			return out, nil
		}
		lastRow := &page[len(page)-1]
		after = &store.ScanAfter{RowKey: lastRow.RowKey, Updated: lastRow.Updated}
	}
}

// rowFinder returns a lookup of the index of the row at a key in rows (-1:
// none): a linear search for the few rows of a page, a map for more.
func rowFinder(rows []store.Row) func(store.RowKey) int {
	if len(rows) > 32 {
		at := make(map[store.RowKey]int, len(rows))
		for i := range rows {
			at[rows[i].RowKey] = i
		}
		return func(k store.RowKey) int {
			if i, ok := at[k]; ok {
				return i
			}
			return -1
		}
	}
	return func(k store.RowKey) int {
		for i := range rows {
			if rows[i].RowKey == k {
				return i
			}
		}
		return -1
	}
}

// score scores every vector under prefix against the query in its space
// and keeps the best k items ranked after last (all when last is nil),
// each by its best score; n is how many items it ranked (a driver that
// scores itself ranks at most k+1 of them: before is how many rank up to
// last). exact, when not nil, is every item scored already (the float
// copy).
func (e *Engine) score(ctx context.Context, tx store.DriverTx, prefix store.Namespace, qs *queries, now time.Time, k int, last *vecindex.Scored, before int, exact []vecindex.Scored) (top *items.TopK[vecindex.Scored], n int, err error) {
	top = items.NewTopK(k, vecindex.CompareScored)
	if exact != nil {
		for _, c := range exact {
			if last == nil || vecindex.CompareScored(c, *last) > 0 {
				top.Push(c)
				n++
			}
		}
		return top, n, nil
	}
	if stx, ok := tx.(ScoreTx); ok {
		sq, err := qs.spaceQueries(ctx, tx, prefix, now)
		if err != nil {
			return nil, 0, err
		}
		// The before items up to last, the k after it and one more, which
		// tells the round whether any are left.
		err = stx.Scores(ctx, prefix, sq, now, before+k+1, func(c vecindex.Scored) {
			if last == nil || vecindex.CompareScored(c, *last) > 0 {
				top.Push(c)
				n++
			}
		})
		return top, n, err
	}
	err = tx.Vectors(ctx, prefix, now, func(rk store.RowKey, updated time.Time, vs []store.Vector) error {
		sq, err := qs.resolve(ctx, rk.NS)
		if err != nil || sq == nil {
			return err // nil: its subject's keys are gone
		}
		c := vecindex.Scored{Key: rk, Updated: updated.UnixNano(), Score: bestScore(sq, vs)}
		if last == nil || vecindex.CompareScored(c, *last) > 0 {
			top.Push(c)
			n++
		}
		return nil
	})
	return top, n, err
}

// bestScore is the best score of an item's vectors against sq.
func bestScore(sq *spaceQuery, vs []store.Vector) float64 {
	best := math.Inf(-1)
	for i := range vs {
		norm := vs[i].Norm
		if norm == 0 {
			norm = indexing.VectorNorm(vs[i].Vec)
		}
		best = max(best, sq.sc.Score(vs[i].Vec, norm))
	}
	return best
}

func (e *Engine) listNamespaces(ctx context.Context, tx store.DriverTx, opt store.ListNamespacesOptions, now time.Time) ([]store.Namespace, error) {
	// The literal labels before the first wildcard narrow the scan.
	var lit store.Namespace
	for _, l := range opt.Prefix {
		if l == "*" {
			break
		}
		lit = append(lit, l)
	}
	all, err := tx.Namespaces(ctx, lit, now)
	if err != nil {
		return nil, err
	}
	return items.ListNamespaces(all, opt), nil
}

// listItems is the core's ListItems hook (items.Hooks).
func (e *Engine) listItems(ctx context.Context, prefix, after string, limit int, now time.Time) ([]store.Item, error) {
	tx, err := e.begin(ctx, false)
	if err != nil {
		return nil, e.errorf("list items: %w", err)
	}
	rows, err := tx.Page(ctx, prefix, after, limit, now)
	out := make([]store.Item, len(rows))
	for i := 0; err == nil && i < len(rows); i++ {
		out[i], err = e.item(ctx, &rows[i], nil, now, false, nil)
	}
	if err = end(tx, err); err != nil {
		return nil, e.errorf("list items: %w", err)
	}
	return out, nil
}

// deletePrefix is the core's DeletePrefix hook (items.Hooks).
func (e *Engine) deletePrefix(ctx context.Context, prefix store.Namespace) (int, error) {
	var n int
	err := e.update(ctx, func(tx store.DriverTx) (err error) {
		if n, err = tx.DeletePrefix(ctx, prefix); err != nil || n == 0 {
			return err
		}
		return e.changedAll(ctx, tx, e.b.Now())
	})
	if err != nil {
		return 0, e.errorf("delete prefix: %w", err)
	}
	return n, nil
}

// PutIf implements store.ConditionalPutter: the check and the write are one
// write transaction.
func (e *Engine) PutIf(ctx context.Context, ns store.Namespace, key string, value map[string]any, cond store.PutCondition, opts ...store.PutOption) error {
	p, err := items.StartPutIf(ctx, e.b, ns, key, value, opts, e.prepare)
	if err != nil {
		return err
	}
	conflict := false
	err = e.update(ctx, func(tx store.DriverTx) error {
		now := e.b.Now()
		if ctx2, ok := tx.(CondTx); ok {
			ctx2.PutCondition(cond)
			return e.apply(ctx, tx, []*write{p}, now) // store.ErrConflict: nothing written
		}
		if e.caps.StatementReads {
			return errStatementReads
		}
		r, ok, err := tx.Get(ctx, p.k)
		if err != nil {
			return err
		}
		live := ok && !items.Expired(r.Expires, now)
		if conflict = !cond.Holds(live, r.Updated); conflict {
			return nil
		}
		return e.apply(ctx, tx, []*write{p}, now)
	})
	e.refused(err, []*write{p})
	switch {
	case errors.Is(err, store.ErrConflict):
		return e.errorf("%w", store.ErrConflict)
	case err != nil:
		return e.errorf("%w", err)
	case conflict:
		return e.errorf("%w", store.ErrConflict)
	}
	return nil
}
