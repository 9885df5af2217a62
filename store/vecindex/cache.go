package vecindex

import (
	"bytes"
	"context"
	"slices"
	"sync"
	"sync/atomic"
)

// DefaultBytes is the default budget of an index (store/sqlitestore's
// DefaultVectorCacheBytes).
const DefaultBytes = 256 << 20

// Cache is the in-process index of the stored vectors' codes (see
// codes.go): about d/8 + 16 bytes per vector (208 at 1536 dimensions)
// plus the item keys, in contiguous arrays, and the codes' middle parts
// (mid.go: 5d/8 + 8 bytes, 968 at 1536 dimensions, off the Go heap; the
// first to go when the index would exceed its budget), so that a search estimates
// every item's score at memory bandwidth without reading its vector, then
// reads and scores exactly only the best few. It is valid for one
// generation of the store (see Source): writes of this process apply
// their codes to the index in commit order (Committed), and a search that
// finds a newer generation in its read (another process wrote) reads only
// the codes of the items logged since, or every code when the log no
// longer reaches back (trimmed, or a full recode).
type Cache struct {
	budget int64 // bytes of index; 0 disables it
	dims   int

	mu     sync.RWMutex
	gen    int64      // generation snap reflects; valid only when snap != nil
	snap   *codeIndex // nil: not loaded
	tooBig bool       // the index exceeded budget: searches scan exactly
	// skew is the stored coverage minus snap's as the load of every code
	// row found them: the items whose code rows are all unreadable (of
	// other dimensions, damaged), which the index cannot hold. snap
	// covers the store while snap.cov + skew equals the stored coverage.
	skew Coverage
	// Stats counts what refreshes read, for tests.
	Stats Stats
	// wantSnapshot asks the next write to store the index as the snapshot
	// (a load read every code, or many since the snapshot, or found the
	// snapshot's rows gone).
	wantSnapshot atomic.Bool
	// repair, when not nil, is the coverage a load of every code row
	// counted, differing from the stored one (written by a build that
	// did not keep it): the next write stores it (see TakeRepair).
	repair atomic.Pointer[Repair]

	// reader, when set (SetReader), opens reads of the store for the
	// cache's work in the background: a load from the snapshot then
	// installs the sign bits and fills the middle parts in behind
	// (fillMid). bgCtx ends that work (Close); bg waits for it.
	reader Reader
	bgCtx  context.Context
	bgStop context.CancelFunc
	bg     sync.WaitGroup
	closed bool     // under mu: Close ran, no work starts
	fill   *fillJob // under mu: a fill to start (startFill), counted in bg
	// syncMid: a fill failed; loads read the middle parts before they
	// return again (which falls back to every code row when the
	// snapshot's are malformed).
	syncMid atomic.Bool

	// snapWriter, when set (SetSnapshotWriter), stores a snapshot of the
	// index behind a write that deleted items (resnap.go): resnap asks
	// for it, snapping (under mu) while it is written, snapAgain (under
	// mu) when a delete came meanwhile.
	snapWriter SnapshotWriter
	resnap     atomic.Bool
	snapping   bool
	snapAgain  bool
	resnapOf   *codeIndex // under mu: the index resnapMissing asked for last
}

// Reader opens a read of the store (one consistent state, as Source
// requires) for work the cache does after the search that asked for it
// returned; done ends the read.
type Reader func(ctx context.Context) (src Source, done func(), err error)

// SetReader lets the cache read the store on its own, before its first
// use: a load from the snapshot then returns once it holds the sign bits
// (about a sixth of the snapshot's bytes at 1 536 dimensions) and the
// middle parts are read behind it, on a read of r's, while searches bound
// by sign bits and fine parts as without them. Without a reader (the
// default) a load reads the middle parts before it returns. Close stops
// and waits for that work.
func (c *Cache) SetReader(r Reader) {
	c.reader = r
	c.bgCtx, c.bgStop = context.WithCancel(context.Background())
}

// Close stops the cache's work in the background, if any, and waits for
// it. The cache stays usable (loads then read everything themselves).
func (c *Cache) Close() {
	c.mu.Lock()
	c.closed = true
	stop := c.bgStop
	c.mu.Unlock()
	if stop != nil {
		stop()
	}
	// A fill not started yet runs and stops at once (its context is done).
	c.startFill()
	c.bg.Wait()
}

// WaitFill waits for the middle parts being read behind a load, if any
// (for tests and benchmarks).
func (c *Cache) WaitFill() {
	c.startFill()
	c.bg.Wait()
}

// MidParts returns how many live codes of the index hold a middle part,
// and how many live codes it holds (for tests).
func (c *Cache) MidParts() (held, codes int) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	t := c.snap
	if t == nil {
		return 0, 0
	}
	for i := range t.slots {
		s := &t.slots[i]
		if !s.live {
			continue
		}
		for j := int(s.first); j < int(s.first+s.n); j++ {
			codes++
			if _, _, ok := t.midOf(j); ok {
				held++
			}
		}
	}
	return held, codes
}

// Repair is the coverage of generation Gen's code rows, counted (Real),
// and the stored one it replaces.
type Repair struct {
	Gen          int64
	Stored, Real Coverage
}

// Stats counts what the cache read from its storage, so that tests can
// check that a refresh reads only the changed rows.
type Stats struct {
	FullLoads   atomic.Int64 // loads of every code
	Incremental atomic.Int64 // refreshes from the log
	CodeRows    atomic.Int64 // code rows read, by either
	Rescored    atomic.Int64 // items searches scored exactly
	Refined     atomic.Int64 // items searches bounded by their codes' fine parts
	MidBounded  atomic.Int64 // items searches bounded by their codes' middle parts
	Abandoned   atomic.Int64 // searches whose bounds were too loose: exact scan instead
	Snapshots   atomic.Int64 // loads from the snapshot
	Uncovered   atomic.Int64 // indexes dropped: they did not cover the store
	MidFills    atomic.Int64 // middle parts read behind a load from the snapshot
	MidFailed   atomic.Int64 // of those, given up (the index was dropped)
}

// code is one decoded vector code.
type code struct {
	bits []uint64
	meta codeMeta
	mid  []byte // the middle part (see mid.go); nil: none
	mm   midMeta
}

// decodeFull decodes a code blob of d dimensions with its middle part
// (see mid.go), derived from its fine part when it has one.
func decodeFull(b []byte, d int) (code, bool) {
	bits, m, ok := decodeCode(nil, b, d)
	if !ok {
		return code{}, false
	}
	c := code{bits: bits, meta: m}
	if f, ok := fineTail(b, d); ok {
		c.mid, c.mm = appendMid(make([]byte, 0, midBytes(d)), &f)
	}
	return c, true
}

// New returns an index of vectors of dims dimensions within budget bytes
// (0 disables it).
func New(budget int64, dims int) *Cache { return &Cache{budget: budget, dims: dims} }

// Dims is the dimension count of the vectors the index holds.
func (c *Cache) Dims() int { return c.dims }

// Best returns the keys of the r items under prefix of highest bound
// against the queries qs (skipping those in skip), highest first, with
// their bounds, when the index holds generation gen; ok is false when it
// does not. left is how many items were ranked. missing, when not empty,
// names namespaces under prefix whose space qs has not met: nothing else
// is returned, and the caller resolves them and asks again.
func (c *Cache) Best(gen int64, prefix string, qs Queries, r int, skip map[Key]bool) (keys []Key, bounds []float32, left int, missing []string, ok bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	t := c.snap
	if t == nil || c.gen != gen {
		return nil, nil, 0, nil, false
	}
	ests, missing := t.estimators(prefix, qs)
	if len(missing) > 0 {
		return nil, nil, 0, missing, true
	}
	all := t.estimateAll(ests, skip)
	n := min(r, len(all))
	TopK(all, n, compareApprox)
	keys = make([]Key, 0, n)
	bounds = make([]float32, 0, n)
	for _, a := range all[:n] {
		s := &t.slots[a.slot]
		keys = append(keys, t.itemOf(s))
		bounds = append(bounds, a.est)
	}
	return keys, bounds, len(all), nil, true
}

// Change is an item a committed transaction wrote: its new codes (as
// EncodeCode made them), or Deleted.
type Change struct {
	Key     Key
	Codes   [][]byte
	Deleted bool
	// Vectors are the item's new vectors, for an exact in-process copy
	// kept beside the index (store/engine's float copy); the
	// index itself uses only Codes.
	Vectors [][]float32
}

// Committed applies the changes of a committed transaction that produced
// gen, at time ts. Called in commit order. A transaction that recoded
// every vector (full) leaves the index behind: the next search reloads it.
func (c *Cache) Committed(gen int64, changes []Change, ts int64, full bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.snap == nil || c.gen != gen-1 || full {
		return // behind: the next search reads the log
	}
	t := c.snap
	for _, ch := range changes {
		var codes []code
		if ch.Deleted && c.snapWriter != nil {
			// The driver dropped the snapshot (resnap.go).
			c.resnap.Store(true)
		}
		if !ch.Deleted {
			for _, b := range ch.Codes {
				if cd, ok := decodeFull(b, t.dims); ok {
					codes = append(codes, cd)
				}
			}
		}
		t.add(ch.Key.NS, ch.Key.Key, ts, codes)
	}
	t.compact()
	c.gen = gen
	if !t.fits(c.budget) {
		c.snap, c.tooBig = nil, true
		return
	}
	if len(t.meta)-t.dead >= SnapshotMinCodes {
		c.resnapLocked()
	}
}

// Invalidate drops the index: the next search loads every code.
func (c *Cache) Invalidate() {
	c.mu.Lock()
	c.snap = nil
	c.mu.Unlock()
}

// Enabled reports whether searches should use (and load) the index.
func (c *Cache) Enabled() bool {
	if c.budget <= 0 {
		return false
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	return !c.tooBig
}

// Loaded reports whether the index is in memory (for tests).
func (c *Cache) Loaded() bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.snap != nil
}

// TooBig reports whether the index exceeded its budget (for tests).
func (c *Cache) TooBig() bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.tooBig
}

// covers reports whether the index holds generation q.Gen and covers the
// store as q records it (without a stored coverage there is nothing to
// compare with). An index that does not is dropped.
func (c *Cache) covers(q State) bool {
	c.mu.RLock()
	held, ok := c.coversLocked(q)
	if ok && q.SnapshotGone && len(c.snap.meta) >= SnapshotMinCodes {
		// Another connection deleted the snapshot's rows: store it again,
		// so that the next process opened loads it.
		c.wantSnapshot.Store(true)
	}
	c.mu.RUnlock()
	if ok || !held {
		return ok
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if held, ok = c.coversLocked(q); held && !ok {
		c.snap = nil
		c.Stats.Uncovered.Add(1)
	}
	return ok
}

// coversLocked is covers's test: held reports that the index holds q.Gen.
func (c *Cache) coversLocked(q State) (held, ok bool) {
	if c.snap == nil || c.gen != q.Gen {
		return false, false
	}
	return true, !q.Stored.Known || c.snap.cov.Plus(c.skew) == q.Stored.Cov
}

// Refresh brings the index to generation q.Gen from src, a read of the
// store at that generation, incrementally from the log when it can. It
// reports false when the index cannot serve that generation (over
// budget, or this process already holds a newer one): the search then
// scans exactly.
func (c *Cache) Refresh(ctx context.Context, src Source, q State) (ok bool, err error) {
	if q.NoSnapshot && c.snapWriter != nil {
		defer func() {
			if ok && err == nil {
				c.resnapMissing(q.Gen)
			}
		}()
	}
	c.mu.RLock()
	have, g := c.snap != nil, c.gen
	c.mu.RUnlock()
	switch {
	case have && g == q.Gen:
		if c.covers(q) {
			return true, nil
		}
		return c.loadRows(ctx, src, q)
	case have && g > q.Gen:
		return false, nil
	case have && q.LogFloor <= g:
		keys, full, err := src.Changed(ctx, g, MaxLogRefresh)
		if err != nil {
			return false, err
		}
		if !full {
			ok, err := c.applyChanged(ctx, src, g, q.Gen, keys)
			if err != nil || !ok || c.covers(q) {
				return ok, err
			}
			// The log did not hold every change (rows deleted).
			return c.loadRows(ctx, src, q)
		}
	}
	return c.load(ctx, src, q)
}

// MaxLogRefresh bounds the items a refresh from the log reads; past it a
// full load costs little more.
const MaxLogRefresh = 8192

// changedItem is an item's codes as read for a refresh.
type changedItem struct {
	updated int64
	codes   []code
}

// readCodes reads the codes of keys from src.
func (c *Cache) readCodes(ctx context.Context, src Source, keys []Key) (map[Key]*changedItem, error) {
	got := map[Key]*changedItem{}
	err := src.Codes(ctx, keys, func(k Key, upd int64, b []byte) {
		c.Stats.CodeRows.Add(1)
		cd, ok := decodeFull(b, c.dims)
		if !ok {
			return
		}
		it := got[k]
		if it == nil {
			it = &changedItem{}
			got[k] = it
		}
		it.updated = upd
		it.codes = append(it.codes, cd)
	})
	return got, err
}

// apply replaces the codes of keys with got's.
func (t *codeIndex) apply(keys []Key, got map[Key]*changedItem) {
	for _, k := range keys {
		if it := got[k]; it != nil {
			t.add(k.NS, k.Key, it.updated, it.codes)
		} else {
			t.remove(k)
		}
	}
	t.compact()
}

// applyChanged reads the codes of keys from src (generation gen) and
// applies them to the index if it still holds generation from.
func (c *Cache) applyChanged(ctx context.Context, src Source, from, gen int64, keys []Key) (bool, error) {
	got, err := c.readCodes(ctx, src, keys)
	if err != nil {
		return false, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.snap == nil || c.gen != from {
		return c.snap != nil && c.gen == gen, nil
	}
	t := c.snap
	t.apply(keys, got)
	c.gen = gen
	c.Stats.Incremental.Add(1)
	if !t.fits(c.budget) {
		c.snap, c.tooBig = nil, true
		return false, nil
	}
	return true, nil
}

// load reads the index of src (generation q.Gen): from the snapshot and
// the log since when they cover the store, from every code otherwise
// (see loadCodes). It installs it unless the cache holds a newer
// generation already, and reports whether the index now holds q.Gen.
func (c *Cache) load(ctx context.Context, src Source, q State) (bool, error) {
	centre, snapGen, err := src.Quant(ctx)
	if err != nil {
		return false, err
	}
	// Without a stored coverage a snapshot cannot be checked: not used.
	if q.Stored.Known && snapGen >= 0 && q.LogFloor <= snapGen && snapGen <= q.Gen && !q.SnapshotGone {
		ok, err := c.loadSnapshot(ctx, src, centre, snapGen, q)
		if ok || err != nil {
			return ok, err
		}
	}
	return c.loadCodes(ctx, src, q, centre)
}

// loadRows is load from every code.
func (c *Cache) loadRows(ctx context.Context, src Source, q State) (bool, error) {
	centre, _, err := src.Quant(ctx)
	if err != nil {
		return false, err
	}
	return c.loadCodes(ctx, src, q, centre)
}

// loadCodes reads every code of src (generation q.Gen) and installs them
// unless the cache holds a newer generation already. It reports whether
// the index now holds q.Gen. Codes of other dimensions than the index's
// (left by an earlier configuration) are skipped; the coverage of the
// items with codes is counted as they are read, and stored (by the next
// write: TakeRepair) when the stored one differs.
func (c *Cache) loadCodes(ctx context.Context, src Source, q State, centre []float32) (bool, error) {
	gen := q.Gen
	t := newCodeIndex(c.dims, centre)
	var (
		open = int32(-1) // slot being filled
		rows int64
		// the coverage of every item with a code row, readable or not
		real            Coverage
		lastNS, lastKey []byte
		nh              = NSHash("")
		over            bool
	)
	err := src.AllCodes(ctx, func(ns, key []byte, upd int64, b []byte) bool {
		rows++
		if rows == 1 || !bytes.Equal(key, lastKey) || !bytes.Equal(ns, lastNS) {
			if rows == 1 || !bytes.Equal(ns, lastNS) {
				lastNS = append(lastNS[:0], ns...)
				nh = NSHash(string(lastNS))
			}
			lastKey = append(lastKey[:0], key...)
			real.Add(KeyHash(nh, lastKey))
		}
		var (
			m  codeMeta
			ok bool
		)
		if t.bits, m, ok = decodeCode(t.bits, b, c.dims); !ok {
			return true
		}
		if open < 0 || t.names[t.slots[open].ns] != string(ns) || !bytes.Equal(t.keyOf(&t.slots[open]), key) {
			id := t.internBytes(ns)
			s := codeSlot{updated: upd, ns: id, first: int32(len(t.meta))}
			if !t.appendSorted(key, s) {
				// The storage's order is not Go's byte order (SQLite's in a
				// UTF-16 database): the item goes to the tail.
				k := Key{NS: t.names[id], Key: string(key)}
				t.remove(k)
				t.push(k, s)
			}
			open = int32(len(t.slots) - 1)
		}
		t.meta = append(t.meta, m)
		if f, ok := fineTail(b, c.dims); ok {
			t.pushMid(&f, nil, midMeta{})
		} else {
			t.pushMid(nil, nil, noMid)
		}
		t.slots[open].n++
		over = rows%1024 == 0 && !t.fits(c.budget)
		return !over
	})
	c.Stats.CodeRows.Add(rows)
	if err != nil {
		return false, err
	}
	if over || !t.fits(c.budget) {
		c.mu.Lock()
		c.tooBig = true
		c.mu.Unlock()
		return false, nil
	}
	c.Stats.FullLoads.Add(1)
	if len(t.meta) >= SnapshotMinCodes {
		c.wantSnapshot.Store(true)
	}
	stored := real
	if q.Stored.Known {
		stored = q.Stored.Cov
	}
	if q.Stored.Known && real != stored {
		c.repair.Store(&Repair{Gen: gen, Stored: stored, Real: real})
	}
	return c.install(t, gen, stored.Minus(t.cov)), nil
}

// install makes t, at generation gen, the index unless the cache holds a
// newer one already, and reports whether the cache holds gen. skew is
// what the stored coverage has more than t's (see Cache.skew).
func (c *Cache) install(t *codeIndex, gen int64, skew Coverage) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.snap == nil || c.gen < gen {
		c.snap, c.gen, c.skew = t, gen, skew
	}
	return c.gen == gen
}

// TakeRepair returns, once, the coverage a load counted that differs from
// the stored one (nil: none): the caller stores it when its generation is
// still the store's, then calls Repaired.
func (c *Cache) TakeRepair() *Repair { return c.repair.Swap(nil) }

// Repaired records that the storage now holds r.Real as the coverage of
// generation r.Gen: the index, compared through its skew, follows.
func (c *Cache) Repaired(r *Repair) {
	c.mu.Lock()
	if c.snap != nil && c.gen == r.Gen {
		c.skew = c.skew.Plus(r.Real.Minus(r.Stored))
	}
	c.mu.Unlock()
}

// TakeSnapshot returns, when a load asked for one (once), the index's
// generation and its snapshot parts, for the caller to store if that is
// still the store's generation; ok is false otherwise.
func (c *Cache) TakeSnapshot() (gen int64, parts [][]byte, ok bool) {
	if !c.wantSnapshot.Load() {
		return 0, nil, false
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.snap != nil && c.snap.filling {
		// Not yet: the snapshot would lack the middle parts being read.
		// A call after the fill takes it.
		return 0, nil, false
	}
	if !c.wantSnapshot.CompareAndSwap(true, false) || c.snap == nil {
		return 0, nil, false
	}
	return c.gen, c.snap.serialize(c.gen), true
}

// TopK moves the k smallest elements of s (by compare) to s[:k], sorted,
// with a bounded max-heap: O(n log k) instead of sorting all of s.
func TopK[T any](s []T, k int, compare func(a, b T) int) {
	if k <= 0 {
		return
	}
	if k >= len(s)/4 {
		slices.SortFunc(s, compare)
		return
	}
	less := func(i, j int) bool { return compare(s[i], s[j]) > 0 } // max-heap
	down := func(i, n int) {
		for {
			l := 2*i + 1
			if l >= n {
				return
			}
			j := l
			if r := l + 1; r < n && less(r, l) {
				j = r
			}
			if !less(j, i) {
				return
			}
			s[i], s[j] = s[j], s[i]
			i = j
		}
	}
	for i := k/2 - 1; i >= 0; i-- {
		down(i, k)
	}
	for i := k; i < len(s); i++ {
		if compare(s[i], s[0]) < 0 {
			s[0], s[i] = s[i], s[0]
			down(0, k)
		}
	}
	slices.SortFunc(s[:k], compare)
}
