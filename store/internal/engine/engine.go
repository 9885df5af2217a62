// Package engine implements the public store contract (store.Store and the
// optional interfaces every store of this module offers) once, on top of a
// store.Driver: option and argument checks, TTL resolution, expiry and
// refresh-on-read, embedding and vector spaces, copying values in and out,
// filters, scoring, ordering, paging, conditional puts, the sweeper. A
// driver only stores and returns rows (see store.Driver).
package engine

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/memvault/memvault/jsonvalue"
	"github.com/memvault/memvault/store"
	"github.com/memvault/memvault/store/internal/filtering"
	"github.com/memvault/memvault/store/internal/indexing"
	"github.com/memvault/memvault/store/internal/items"
	"github.com/memvault/memvault/store/internal/vecindex"
)

// Options configures an Engine.
type Options struct {
	Index *store.IndexConfig
	TTL   *store.TTLConfig
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Engine is a store.Store (with Sweeper, ConditionalPutter, Lister and
// PrefixDeleter) on a driver. It is safe for concurrent use as far as its
// driver is.
type Engine struct {
	*items.Front
	b    *items.Base
	d    store.Driver
	caps store.DriverCaps
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
	e := &Engine{b: b, d: d, caps: d.Caps()}
	e.Front = items.NewFront(b, items.Hooks{Batch: e.Batch, ListItems: e.listItems, DeletePrefix: e.deletePrefix})
	b.StartSweeper(e.Sweep)
	return e, nil
}

// Close stops the sweeper, closes the driver and makes every later call
// fail with store.ErrClosed. It is safe to call more than once.
func (e *Engine) Close() error { return e.b.Close(e.d.Close) }

// errorf prefixes err with the driver's name, unless the message has it
// already (the core's checks prefix their errors).
func (e *Engine) errorf(format string, args ...any) error {
	err := fmt.Errorf(format, args...)
	if strings.HasPrefix(err.Error(), e.b.Driver+": ") {
		return err
	}
	return fmt.Errorf("%s: %w", e.b.Driver, err)
}

// Sweep deletes the items expired at the store's current time and returns
// how many it deleted.
func (e *Engine) Sweep(ctx context.Context) (int, error) {
	if err := e.b.Check(ctx); err != nil {
		return 0, err
	}
	var n int
	err := e.d.Update(ctx, func(tx store.DriverTx) error {
		var err error
		n, err = tx.DeleteExpired(ctx, e.b.Now())
		return err
	})
	if err != nil {
		return 0, e.errorf("sweep: %w", err)
	}
	return n, nil
}

// write is a prepared write: the core's Put and the row it stores.
type write struct {
	*items.Put
	k store.RowKey
}

func prepare(_ context.Context, p *items.Put) (*write, error) {
	return &write{Put: p, k: store.RowKey{NS: p.Prefix, Key: p.Key}}, nil
}

// refresh is an item whose TTL a read refreshed.
type refresh struct {
	k   store.RowKey
	exp time.Time
}

// Batch runs ops: every read sees the state before the batch's writes, and
// of several writes to one key the last wins. Embedding runs before the
// driver is touched; a batch with writes is one Update, a read-only batch
// one View (and an Update for the TTLs it refreshes, unless the driver can
// refresh in a View).
func (e *Engine) Batch(ctx context.Context, ops []store.Op) ([]store.Result, error) {
	plan, puts, err := items.StartBatch(ctx, e.b, ops, prepare)
	if err != nil {
		return nil, err
	}
	now := e.b.Now()
	results := make([]store.Result, len(ops))
	var refreshes []refresh
	reads := func(tx store.DriverTx) error {
		refreshes = refreshes[:0]
		for i, op := range ops {
			var err error
			switch o := op.(type) {
			case store.GetOp:
				results[i].Item, err = e.get(ctx, tx, store.RowKey{NS: o.Namespace.String(), Key: o.Key}, now, e.b.Refresh(o.RefreshTTL), &refreshes)
			case store.SearchOp:
				results[i].Items, err = e.search(ctx, tx, o.Prefix, o.Options, plan.Queries[o.Options.Query], now, &refreshes)
			case store.ListNamespacesOp:
				results[i].Namespaces, err = e.listNamespaces(ctx, tx, o.Options, now)
			}
			if err != nil {
				return fmt.Errorf("op %d: %w", i, err)
			}
		}
		return nil
	}
	if len(puts) > 0 {
		err = e.d.Update(ctx, func(tx store.DriverTx) error {
			if err := reads(tx); err != nil {
				return err
			}
			if err := applyRefreshes(ctx, tx, refreshes); err != nil {
				return err
			}
			return e.apply(ctx, tx, puts, now)
		})
	} else {
		err = e.read(ctx, &refreshes, reads)
	}
	if err != nil {
		return nil, e.errorf("%w", err)
	}
	return results, nil
}

// read runs reads in a View, then applies the TTL refreshes they recorded:
// in the View when the driver can, in an Update after it otherwise.
func (e *Engine) read(ctx context.Context, refreshes *[]refresh, reads func(store.DriverTx) error) error {
	err := e.d.View(ctx, func(tx store.DriverTx) error {
		if err := e.b.Check(ctx); err != nil {
			return err
		}
		if err := reads(tx); err != nil {
			return err
		}
		if e.caps.RefreshInView {
			err := applyRefreshes(ctx, tx, *refreshes)
			*refreshes = nil
			return err
		}
		return nil
	})
	if err == nil && len(*refreshes) > 0 {
		err = e.d.Update(ctx, func(tx store.DriverTx) error { return applyRefreshes(ctx, tx, *refreshes) })
	}
	return err
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
	var (
		it        *store.Item
		refreshes []refresh
	)
	err := e.read(ctx, &refreshes, func(tx store.DriverTx) error {
		var err error
		it, err = e.get(ctx, tx, store.RowKey{NS: ns.String(), Key: key}, now, refreshTTL, &refreshes)
		return err
	})
	if err != nil {
		return nil, e.errorf("%w", err)
	}
	return it, nil
}

func applyRefreshes(ctx context.Context, tx store.DriverTx, rs []refresh) error {
	for _, r := range rs {
		if err := tx.Refresh(ctx, r.k, r.exp); err != nil {
			return err
		}
	}
	return nil
}

// apply performs a batch's writes in tx. A replaced item keeps its
// CreatedAt, and its UpdatedAt moves forward even within one clock tick, so
// that it names a version (store.PutCondition).
func (e *Engine) apply(ctx context.Context, tx store.DriverTx, puts []*write, now time.Time) error {
	if err := e.b.Check(ctx); err != nil {
		return err
	}
	var dels, keys []store.RowKey
	for _, p := range puts {
		if p.Value == nil {
			dels = append(dels, p.k)
		} else {
			keys = append(keys, p.k)
		}
	}
	if len(dels) > 0 {
		if err := tx.Delete(ctx, dels); err != nil {
			return err
		}
	}
	if len(keys) == 0 {
		return nil
	}
	// The rows replaced, in a slice: a batch writes few keys.
	var old []store.Row
	if err := tx.Rows(ctx, keys, func(r store.Row) {
		old = append(old, store.Row{RowKey: r.RowKey, Created: r.Created, Updated: r.Updated})
	}); err != nil {
		return err
	}
	var byKey map[store.RowKey]int
	if len(old) > 16 {
		byKey = make(map[store.RowKey]int, len(old))
		for i, r := range old {
			byKey[r.RowKey] = i
		}
	}
	replaced := func(k store.RowKey) (store.Row, bool) {
		if byKey != nil {
			i, ok := byKey[k]
			return old[i], ok
		}
		for _, r := range old {
			if r.RowKey == k {
				return r, true
			}
		}
		return store.Row{}, false
	}
	rows := make([]store.RowWrite, 0, len(keys))
	for _, p := range puts {
		if p.Value == nil {
			continue
		}
		w := store.RowWrite{Row: store.Row{RowKey: p.k, Namespace: p.Namespace, Value: p.Value,
			Created: now, Updated: now, TTLMinutes: items.TTLMinutes(p.TTL)}, Reindex: p.Reindex}
		if p.TTL > 0 {
			w.Expires = now.Add(p.TTL)
		}
		if o, ok := replaced(p.k); ok {
			w.Created = o.Created
			if !w.Updated.After(o.Updated) {
				w.Updated = o.Updated.Add(time.Nanosecond)
			}
		}
		if p.Reindex {
			w.Vectors = make([]store.Vector, len(p.Vectors))
			for i, v := range p.Vectors {
				w.Vectors[i] = store.Vector{Field: p.Texts[i].Field, Vec: v, Norm: indexing.VectorNorm(v)}
			}
		}
		rows = append(rows, w)
	}
	return tx.Write(ctx, rows)
}

// item turns a live row into the item a read returns, refreshing its TTL
// when asked (the refresh is recorded for the caller to apply).
func (e *Engine) item(r store.Row, now time.Time, refreshTTL bool, refreshes *[]refresh) store.Item {
	loc := now.Location()
	it := store.Item{Namespace: r.Namespace, Key: r.Key, Value: r.Value,
		CreatedAt: r.Created.In(loc), UpdatedAt: r.Updated.In(loc)}
	if it.Namespace == nil {
		it.Namespace = store.ParseNamespace(r.NS)
	} else if e.caps.SharedValues {
		it.Namespace = it.Namespace.Clone()
	}
	if e.caps.SharedValues {
		it.Value = jsonvalue.Copy(r.Value).(map[string]any)
	}
	exp := r.Expires
	if refreshTTL && r.TTLMinutes > 0 {
		exp = now.Add(items.RefreshTTL(r.TTLMinutes))
		*refreshes = append(*refreshes, refresh{r.RowKey, exp})
	}
	if !exp.IsZero() {
		it.ExpiresAt = exp.In(loc)
	}
	return it
}

func (e *Engine) get(ctx context.Context, tx store.DriverTx, k store.RowKey, now time.Time, refreshTTL bool, refreshes *[]refresh) (*store.Item, error) {
	var out *store.Item
	err := tx.Rows(ctx, []store.RowKey{k}, func(r store.Row) {
		if !items.Expired(r.Expires, now) {
			it := e.item(r, now, refreshTTL, refreshes)
			out = &it
		}
	})
	return out, err
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
	take := func(r store.Row, score *float64) bool {
		if seen >= need {
			return false
		}
		if !filter.Match(r.Value) {
			return true
		}
		seen++
		if seen > opt.Offset {
			out = append(out, store.SearchItem{Item: e.item(r, now, refreshTTL, refreshes), Score: score})
		}
		return seen < need
	}
	if query != nil {
		qs, err := newQueries(ctx, e.b, prefix, query)
		if err != nil {
			return nil, err
		}
		// Rounds of a bounded selection: the best k scored items after the
		// last one taken (the order is total), until the page is full or
		// no item is left; more than one round only when the filter or
		// expiries reject most of the best.
		var last *vecindex.Scored
		for k, more := max(4*need, 64), qs != nil; more; k *= 4 {
			top, n, err := e.score(ctx, tx, prefix, qs, now, k, last)
			if err != nil {
				return nil, err
			}
			ranked := top.Sorted()
			for start := 0; more && start < len(ranked); {
				part := ranked[start:min(len(ranked), start+max(2*(need-seen), 32))]
				start += len(part)
				rows, err := fetch(ctx, tx, part, now)
				if err != nil {
					return nil, err
				}
				for _, c := range part {
					if r, ok := rows[store.RowKey(c.Key)]; ok {
						score := c.Score
						if more = take(r, &score); !more {
							break
						}
					}
				}
			}
			if n <= k || len(ranked) == 0 {
				break
			}
			last = &ranked[len(ranked)-1]
		}
		if seen >= need {
			return out, nil
		}
	}
	err = tx.Scan(ctx, prefix, now, query != nil, func(r store.Row) bool { return take(r, nil) })
	return out, err
}

// fetch reads the live rows of the candidates' items.
func fetch(ctx context.Context, tx store.DriverTx, cands []vecindex.Scored, now time.Time) (map[store.RowKey]store.Row, error) {
	keys := make([]store.RowKey, len(cands))
	for i, c := range cands {
		keys[i] = store.RowKey(c.Key)
	}
	out := make(map[store.RowKey]store.Row, len(cands))
	err := tx.Rows(ctx, keys, func(r store.Row) {
		if !items.Expired(r.Expires, now) {
			out[r.RowKey] = r
		}
	})
	return out, err
}

// score scores every vector under prefix against the query in its space
// and keeps the best k items ranked after last (all when last is nil),
// each by its best score; n is how many items it ranked.
func (e *Engine) score(ctx context.Context, tx store.DriverTx, prefix store.Namespace, qs *queries, now time.Time, k int, last *vecindex.Scored) (top *items.TopK[vecindex.Scored], n int, err error) {
	top = items.NewTopK(k, vecindex.CompareScored)
	var cur vecindex.Scored
	push := func() {
		if cur.Key.NS != "" && (last == nil || vecindex.CompareScored(cur, *last) > 0) {
			top.Push(cur)
			n++
		}
	}
	err = tx.Vectors(ctx, prefix, now, func(rk store.RowKey, updated time.Time, v store.Vector) error {
		sc, err := qs.resolve(ctx, rk.NS)
		if err != nil || sc == nil {
			return err // nil: its subject's keys are gone
		}
		norm := v.Norm
		if norm == 0 {
			norm = indexing.VectorNorm(v.Vec)
		}
		score := sc.Score(v.Vec, norm)
		// An item's vectors come together (store.DriverTx.Vectors).
		if cur.Key == vecindex.Key(rk) {
			cur.Score = max(cur.Score, score)
			return nil
		}
		push()
		cur = vecindex.Scored{Key: vecindex.Key(rk), Updated: updated.UnixNano(), Score: score}
		return nil
	})
	push()
	return top, n, err
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
	var out []store.Item
	err := e.d.View(ctx, func(tx store.DriverTx) error {
		rows, err := tx.Page(ctx, prefix, after, limit, now)
		out = make([]store.Item, len(rows))
		for i, r := range rows {
			out[i] = e.item(r, now, false, nil)
		}
		return err
	})
	if err != nil {
		return nil, e.errorf("list items: %w", err)
	}
	return out, nil
}

// deletePrefix is the core's DeletePrefix hook (items.Hooks).
func (e *Engine) deletePrefix(ctx context.Context, prefix store.Namespace) (int, error) {
	var n int
	err := e.d.Update(ctx, func(tx store.DriverTx) error {
		var err error
		n, err = tx.DeletePrefix(ctx, prefix)
		return err
	})
	if err != nil {
		return 0, e.errorf("delete prefix: %w", err)
	}
	return n, nil
}

// PutIf implements store.ConditionalPutter: the check and the write are one
// Update.
func (e *Engine) PutIf(ctx context.Context, ns store.Namespace, key string, value map[string]any, cond store.PutCondition, opts ...store.PutOption) error {
	p, err := items.StartPutIf(ctx, e.b, ns, key, value, opts, prepare)
	if err != nil {
		return err
	}
	conflict := false
	err = e.d.Update(ctx, func(tx store.DriverTx) error {
		now := e.b.Now()
		live, updated := false, time.Time{}
		err := tx.Rows(ctx, []store.RowKey{p.k}, func(r store.Row) {
			live, updated = !items.Expired(r.Expires, now), r.Updated
		})
		if err != nil {
			return err
		}
		if conflict = !cond.Holds(live, updated); conflict {
			return nil
		}
		return e.apply(ctx, tx, []*write{p}, now)
	})
	switch {
	case err != nil:
		return e.errorf("%w", err)
	case conflict:
		return e.errorf("%w", store.ErrConflict)
	}
	return nil
}
