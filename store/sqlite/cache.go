package sqlite

import (
	"bytes"
	"cmp"
	"context"
	"database/sql"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
)

// DefaultVectorCacheBytes is the default Options.VectorCacheBytes.
const DefaultVectorCacheBytes = 256 << 20

// vecCache is the in-process index of the stored vectors' codes (see
// quant.go): about d/8 + 16 bytes per vector (208 at 1536 dimensions)
// plus the item keys, in contiguous arrays, so that a search estimates
// every item's score at memory bandwidth without reading its vector, then
// reads and scores exactly only the best few. It is valid for one
// generation of the database: every write transaction that changes items
// bumps store_generation.gen and records the items it changed in
// store_vector_log; writes of this process apply their codes to the index
// in commit order, and a search that finds a newer generation in its read
// transaction (another process wrote) reads from its snapshot only the
// codes of the items logged since, or every code when the log no longer
// reaches back (trimmed, or a full recode).
type vecCache struct {
	budget int64 // bytes of index; 0 disables it
	dims   int

	mu     sync.RWMutex
	gen    int64      // generation snap reflects; valid only when snap != nil
	snap   *codeIndex // nil: not loaded
	tooBig bool       // the index exceeded budget: searches scan SQLite
	// skew is the stored coverage minus snap's as the load of every code
	// row found them: the items whose code rows are all unreadable (of
	// other dimensions, damaged), which the index cannot hold. snap
	// covers the store while snap.cov + skew equals the stored coverage.
	skew  coverage
	stats cacheStats // what refreshes read, for tests
	// wantSnapshot asks the next Batch to store the index as the snapshot
	// (a load read every code, or many since the snapshot, or found the
	// snapshot's rows gone).
	wantSnapshot atomic.Bool
	// repair, when not nil, is the coverage a load of every code row
	// counted, differing from the stored one (written by a build that
	// did not keep it): the next Batch stores it (see maybeSnapshot).
	repair atomic.Pointer[coverageRepair]
}

// coverageRepair is the coverage of generation gen's code rows, counted,
// and the stored one it replaces.
type coverageRepair struct {
	gen          int64
	stored, real coverage
}

// cacheStats counts what the cache read from SQLite, so that tests can
// check that a refresh reads only the changed rows.
type cacheStats struct {
	fullLoads   atomic.Int64 // loads of every code
	incremental atomic.Int64 // refreshes from the log
	codeRows    atomic.Int64 // code rows read, by either
	rescored    atomic.Int64 // items searches scored exactly
	abandoned   atomic.Int64 // searches whose bounds were too loose: exact scan instead
	snapshots   atomic.Int64 // loads from the snapshot
	uncovered   atomic.Int64 // indexes dropped: they did not cover the store
}

// codeIndex is the codes of a set of items. Item i owns codes
// [slots[i].first, slots[i].first+slots[i].n) of words (words per code
// each) and meta. Replaced and deleted items leave dead slots, compacted
// when they are half of the table.
//
// An item is found by key in one of two places. slots[:sorted] are in
// strictly increasing (namespace, key) order, as a load reads them from
// the snapshot or the code table, and are found by binary search; slots
// appended out of that order are in tail (compaction sorts them in).
// Building a map of every key was a large part of the first search after
// opening a large store; a write finds its item by ~17 comparisons
// instead of one hash.
//
// Nothing in the arrays holds a pointer (keys are spans of one byte
// arena), so that the garbage collector, which runs several times while
// a load grows the heap, has nothing of them to scan.
type codeIndex struct {
	dims   int
	words  int       // uint64s per code
	centre []float32 // the centre centred codes were made with
	slots  []codeSlot
	keys   []byte // the slots' keys, end to end
	// sorted is how many leading slots are in strictly increasing
	// (namespace, key) byte order: those are found by binary search.
	sorted int
	tail   map[itemKey]int32 // the live slots after the sorted ones
	// tailKeyBytes is the bytes of tail's keys, which the map holds
	// copies of (the arena holds the slots').
	tailKeyBytes int
	live         int // live slots
	bits         []uint64
	meta         []codeMeta
	dead         int // codes in dead slots
	// ns interns namespaces: items of one namespace share its string, and a
	// search tests each namespace against its prefix once.
	ns    map[string]int32
	names []string
	nsh   []uint64 // nsHash of each name
	// cov is the coverage of the live items (see coverage.go), kept as
	// slots come and go.
	cov coverage
}

type codeSlot struct {
	updated  int64
	keyAt    int // the key is keys[keyAt:keyAt+keyLen]
	keyLen   int32
	ns       int32
	first, n int32
	live     bool
}

// code is one decoded vector code.
type code struct {
	bits []uint64
	meta codeMeta
}

func newVecCache(budget int64, dims int) *vecCache { return &vecCache{budget: budget, dims: dims} }

func newCodeIndex(dims int, centre []float32) *codeIndex {
	return &codeIndex{dims: dims, words: codeWords(dims), centre: centreOf(centre, dims), ns: map[string]int32{}}
}

// reserve makes room for about codes more codes, so that loading a
// snapshot grows each array once rather than by repeated doubling (whose
// copies were most of a first search's time at 100 000 codes).
func (t *codeIndex) reserve(codes int) {
	if codes <= 0 {
		return
	}
	t.bits = slices.Grow(t.bits, codes*t.words)
	t.meta = slices.Grow(t.meta, codes)
	t.slots = slices.Grow(t.slots, codes)
}

func (t *codeIndex) intern(ns string) int32 {
	if id, ok := t.ns[ns]; ok {
		return id
	}
	id := int32(len(t.names))
	t.ns[ns] = id
	t.names = append(t.names, ns)
	t.nsh = append(t.nsh, nsHash(ns))
	return id
}

// internBytes is intern of a namespace read from a buffer: it allocates
// only the first time the namespace is seen.
func (t *codeIndex) internBytes(ns []byte) int32 {
	if id, ok := t.ns[string(ns)]; ok {
		return id
	}
	return t.intern(string(ns))
}

// keyOf is s's key: read-only, it aliases the arena.
func (t *codeIndex) keyOf(s *codeSlot) []byte { return t.keys[s.keyAt : s.keyAt+int(s.keyLen)] }

// itemKeyOf is s's item key, its key copied out of the arena.
func (t *codeIndex) itemKeyOf(s *codeSlot) itemKey {
	return itemKey{t.names[s.ns], string(t.keyOf(s))}
}

// compareSlot orders slot s against namespace ns and key.
func (t *codeIndex) compareSlot(s *codeSlot, ns string, key []byte) int {
	if c := strings.Compare(t.names[s.ns], ns); c != 0 {
		return c
	}
	return bytes.Compare(t.keyOf(s), key)
}

// compareSlotKey is compareSlot against an item key. It compares byte by
// byte rather than convert either side, which would allocate for keys
// over 32 bytes, on every probe of a binary search.
func (t *codeIndex) compareSlotKey(s *codeSlot, k itemKey) int {
	if c := strings.Compare(t.names[s.ns], k.ns); c != 0 {
		return c
	}
	a := t.keyOf(s)
	for i := range min(len(a), len(k.key)) {
		if a[i] != k.key[i] {
			return cmp.Compare(a[i], k.key[i])
		}
	}
	return cmp.Compare(len(a), len(k.key))
}

// lookup returns the slot of k's live item.
func (t *codeIndex) lookup(k itemKey) (int32, bool) {
	i, found := slices.BinarySearchFunc(t.slots[:t.sorted], k, func(s codeSlot, k itemKey) int {
		return t.compareSlotKey(&s, k)
	})
	if found && t.slots[i].live {
		return int32(i), true
	}
	j, ok := t.tail[k]
	return j, ok
}

// appendSorted appends slot s, holding key in its namespace s.ns, if that
// keeps every slot sorted: when every slot is sorted already and key comes
// after the last one. It reports whether it appended. A load calls it
// first for each item, so that items read in key order cost no lookup and
// an item out of order (or repeated) shows.
func (t *codeIndex) appendSorted(key []byte, s codeSlot) bool {
	i := len(t.slots)
	if t.sorted != i || (i > 0 && t.compareSlot(&t.slots[i-1], t.names[s.ns], key) >= 0) {
		return false
	}
	s.keyAt, s.keyLen, s.live = len(t.keys), int32(len(key)), true
	t.keys = append(t.keys, key...)
	t.slots = append(t.slots, s)
	t.sorted++
	t.live++
	t.cov.add(keyHash(t.nsh[s.ns], key))
	return true
}

// push appends slot s, holding item k (s.ns must be k's namespace), and
// reports false, appending nothing, when k has a live slot already.
func (t *codeIndex) push(k itemKey, s codeSlot) bool {
	if t.appendSorted([]byte(k.key), s) {
		return true
	}
	if _, dup := t.lookup(k); dup {
		return false
	}
	if t.tail == nil {
		t.tail = map[itemKey]int32{}
	}
	t.tail[k] = int32(len(t.slots))
	t.tailKeyBytes += len(k.ns) + len(k.key)
	s.keyAt, s.keyLen, s.live = len(t.keys), int32(len(k.key)), true
	t.keys = append(t.keys, k.key...)
	t.slots = append(t.slots, s)
	t.live++
	t.cov.add(keyHash(t.nsh[s.ns], k.key))
	return true
}

// add appends an item's codes (all of t.dims dimensions).
func (t *codeIndex) add(ns, key string, updated int64, codes []code) {
	t.remove(itemKey{ns, key})
	if len(codes) == 0 {
		return
	}
	id := t.intern(ns)
	t.push(itemKey{t.names[id], key}, codeSlot{updated: updated, ns: id, first: int32(len(t.meta)), n: int32(len(codes))})
	for _, c := range codes {
		t.bits = append(t.bits, c.bits...)
		t.meta = append(t.meta, c.meta)
	}
}

func (t *codeIndex) remove(k itemKey) {
	i, ok := t.lookup(k)
	if !ok {
		return
	}
	t.slots[i].live = false
	t.dead += int(t.slots[i].n)
	t.live--
	t.cov.sub(keyHash(t.nsh[t.slots[i].ns], k.key))
	if int(i) >= t.sorted {
		delete(t.tail, k)
		t.tailKeyBytes -= len(k.ns) + len(k.key)
	}
}

// compact drops dead slots once they hold half of the codes, and puts the
// live ones in key order: every slot is sorted again and the tail empty,
// so that a long-lived index, whose rewritten items all land in the tail,
// does not drift back into a map of every key.
func (t *codeIndex) compact() {
	if t.dead == 0 || 2*t.dead < len(t.meta) {
		return
	}
	c := newCodeIndex(t.dims, t.centre)
	c.slots = make([]codeSlot, 0, t.live)
	c.keys = make([]byte, 0, len(t.keys))
	c.bits = make([]uint64, 0, len(t.bits)-t.dead*t.words)
	c.meta = make([]codeMeta, 0, len(t.meta)-t.dead)
	for _, i := range t.liveInKeyOrder() {
		s := &t.slots[i]
		ns := c.intern(t.names[s.ns])
		c.appendSorted(t.keyOf(s), codeSlot{updated: s.updated, ns: ns, first: int32(len(c.meta)), n: s.n})
		c.bits = append(c.bits, t.bits[int(s.first)*t.words:int(s.first+s.n)*t.words]...)
		c.meta = append(c.meta, t.meta[s.first:s.first+s.n]...)
	}
	*t = *c
}

// liveInKeyOrder returns the live slots in (namespace, key) order.
func (t *codeIndex) liveInKeyOrder() []int32 {
	order := make([]int32, 0, t.live)
	for i := range t.slots {
		if t.slots[i].live {
			order = append(order, int32(i))
		}
	}
	if t.sorted < len(t.slots) {
		slices.SortFunc(order, func(a, b int32) int {
			x, y := &t.slots[a], &t.slots[b]
			return t.compareSlot(x, t.names[y.ns], t.keyOf(y))
		})
	}
	return order
}

// bytes approximates the index's memory.
func (t *codeIndex) bytes() int64 {
	return int64(8*len(t.bits)+16*len(t.meta)+len(t.keys)+t.tailKeyBytes) + int64(len(t.slots))*40 + int64(len(t.tail))*64
}

// approx is an item's estimated score.
type approx struct {
	est  float32
	slot int32
}

// compareApprox orders by estimate descending, then slot (deterministic).
func compareApprox(a, b approx) int {
	switch {
	case a.est > b.est:
		return -1
	case a.est < b.est:
		return 1
	}
	return int(a.slot - b.slot)
}

// under reports whether namespace ns is prefix or under it ("" matches
// every namespace).
func under(ns, prefix string) bool {
	return prefix == "" || ns == prefix || (strings.HasPrefix(ns, prefix) && ns[len(prefix)] == '.')
}

// estimators returns, for each namespace of t, the estimator of the
// search's query in the namespace's space when the namespace is under
// prefix (nil otherwise, and for spaces whose keys are gone), and the
// namespaces under prefix whose space the search has not met yet (see
// queries.lookup): it reads no keys, and the caller holds the cache's lock.
func (t *codeIndex) estimators(prefix string, qs *queries) (ests []*estimator, missing []string) {
	ests = make([]*estimator, len(t.names))
	for i, n := range t.names {
		if !under(n, prefix) {
			continue
		}
		sq, known := qs.lookup(n)
		switch {
		case !known:
			missing = append(missing, n)
		case sq != nil:
			ests[i] = sq.estimator(qs.dist, t.centre)
		}
	}
	return ests, missing
}

// estimateAll estimates every live item of a namespace with an estimator
// in ests (see estimators) by its best code, skipping those in skip.
func (t *codeIndex) estimateAll(ests []*estimator, skip map[itemKey]bool) []approx {
	var skipSlots map[int32]bool
	if len(skip) > 0 {
		skipSlots = make(map[int32]bool, len(skip))
		for k := range skip {
			if i, ok := t.lookup(k); ok {
				skipSlots[i] = true
			}
		}
	}
	out := make([]approx, 0, t.live)
	w := t.words
	for i := range t.slots {
		s := &t.slots[i]
		if !s.live || ests[s.ns] == nil || skipSlots[int32(i)] {
			continue
		}
		e := ests[s.ns]
		first := int(s.first)
		best := e.estimate(t.bits[first*w:(first+1)*w], &t.meta[first])
		for j := first + 1; j < first+int(s.n); j++ {
			best = max(best, e.estimate(t.bits[j*w:(j+1)*w], &t.meta[j]))
		}
		out = append(out, approx{est: best, slot: int32(i)})
	}
	return out
}

// best returns the keys of the r items under prefix of highest bound
// against the queries qs (skipping those in skip), highest first, with
// their bounds, when the index holds generation gen; ok is false when it
// does not. left is how many items were ranked. missing, when not empty,
// names namespaces under prefix whose space qs has not met: nothing else
// is returned, and the caller resolves them and asks again.
func (c *vecCache) best(gen int64, prefix string, qs *queries, r int, skip map[itemKey]bool) (keys []itemKey, bounds []float32, left int, missing []string, ok bool) {
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
	topK(all, n, compareApprox)
	keys = make([]itemKey, 0, n)
	bounds = make([]float32, 0, n)
	for _, a := range all[:n] {
		s := &t.slots[a.slot]
		keys = append(keys, t.itemKeyOf(s))
		bounds = append(bounds, a.est)
	}
	return keys, bounds, len(all), nil, true
}

// committed applies the puts of a committed transaction that produced gen,
// with the codes it wrote. Called in commit order
// (sqlitedb.WriteCommitted). A transaction that recoded every vector
// (full) leaves the index behind: the next search reloads it.
func (c *vecCache) committed(gen int64, puts []*put, ts int64, full bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.snap == nil || c.gen != gen-1 || full {
		return // behind: the next search reads the log
	}
	t := c.snap
	for _, p := range puts {
		var codes []code
		for _, b := range p.codes {
			bits, m, ok := decodeCode(nil, b, t.dims)
			if ok {
				codes = append(codes, code{bits, m})
			}
		}
		if p.encoded == nil {
			codes = nil
		}
		t.add(p.k.ns, p.k.key, ts, codes)
	}
	t.compact()
	c.gen = gen
	if t.bytes() > c.budget {
		c.snap, c.tooBig = nil, true
	}
}

// invalidate drops the index: the next search loads every code.
func (c *vecCache) invalidate() {
	c.mu.Lock()
	c.snap = nil
	c.mu.Unlock()
}

// enabled reports whether searches should use (and load) the index.
func (c *vecCache) enabled() bool {
	if c.budget <= 0 {
		return false
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	return !c.tooBig
}

// quantState is the row of store_vector_quant with the generation, as a
// read transaction sees them.
type quantState struct {
	gen, codesGen, logFloor int64
	stored                  storedCoverage // of the code rows
	// snapshotGone: snapshot_gen names a snapshot whose rows are gone
	// (deleted by hand or by a tool, not by a write of the store, which
	// resets snapshot_gen).
	snapshotGone bool
}

func readQuantState(ctx context.Context, tx *sql.Tx, st *readStmts) (q quantState, err error) {
	var items, sum sql.NullInt64
	err = tx.StmtContext(ctx, st.gen).QueryRowContext(ctx).Scan(&q.gen, &q.codesGen, &q.logFloor, &items, &sum, &q.snapshotGone)
	q.stored.scan(items, sum)
	return q, err
}

// covers reports whether the index holds generation q.gen and covers the
// store as q records it (without a stored coverage, which Open computes,
// there is nothing to compare with). An index that does not is dropped.
func (c *vecCache) covers(q quantState) bool {
	c.mu.RLock()
	held, ok := c.coversLocked(q)
	if ok && q.snapshotGone && len(c.snap.meta) >= snapshotMinCodes {
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
		c.stats.uncovered.Add(1)
	}
	return ok
}

// coversLocked is covers's test: held reports that the index holds q.gen.
func (c *vecCache) coversLocked(q quantState) (held, ok bool) {
	if c.snap == nil || c.gen != q.gen {
		return false, false
	}
	return true, !q.stored.known || c.snap.cov.plus(c.skew) == q.stored.cov
}

// refresh brings the index to generation q.gen from the snapshot tx,
// incrementally from the log when it can. It reports false when the
// index cannot serve that generation (over budget, or this process
// already holds a newer one): the search then scans SQLite.
func (c *vecCache) refresh(ctx context.Context, tx *sql.Tx, q quantState) (bool, error) {
	c.mu.RLock()
	have, g := c.snap != nil, c.gen
	c.mu.RUnlock()
	switch {
	case have && g == q.gen:
		if c.covers(q) {
			return true, nil
		}
		return c.loadRows(ctx, tx, q)
	case have && g > q.gen:
		return false, nil
	case have && q.logFloor <= g:
		keys, full, err := c.changed(ctx, tx, g)
		if err != nil {
			return false, err
		}
		if !full {
			ok, err := c.applyChanged(ctx, tx, g, q.gen, keys)
			if err != nil || !ok || c.covers(q) {
				return ok, err
			}
			// The log did not hold every change (rows deleted).
			return c.loadRows(ctx, tx, q)
		}
	}
	return c.load(ctx, tx, q)
}

// maxLogRefresh bounds the items a refresh from the log reads; past it a
// full load costs little more.
const maxLogRefresh = 8192

// changed reads the items logged after generation g; full is true when
// the log asks for a full load (a recode) or holds too many.
func (c *vecCache) changed(ctx context.Context, tx *sql.Tx, g int64) (keys []itemKey, full bool, err error) {
	rs, err := tx.QueryContext(ctx, `SELECT DISTINCT prefix, key FROM store_vector_log WHERE gen > ? LIMIT ?`, g, maxLogRefresh+1)
	if err != nil {
		return nil, false, err
	}
	defer rs.Close()
	for rs.Next() {
		var ns, key sql.NullString
		if err := rs.Scan(&ns, &key); err != nil {
			return nil, false, err
		}
		if !ns.Valid || !key.Valid || len(keys) == maxLogRefresh {
			return nil, true, nil
		}
		keys = append(keys, itemKey{ns.String, key.String})
	}
	return keys, false, rs.Err()
}

// changedItem is an item's codes as read for a refresh.
type changedItem struct {
	updated int64
	codes   []code
}

// readCodes reads the codes of keys from tx.
func (c *vecCache) readCodes(ctx context.Context, tx *sql.Tx, keys []itemKey) (map[itemKey]*changedItem, error) {
	got := map[itemKey]*changedItem{}
	for start := 0; start < len(keys); start += 200 {
		part := keys[start:min(len(keys), start+200)]
		in, args := keysIn(part)
		rs, err := tx.QueryContext(ctx, `SELECT prefix, key, updated_at, code FROM store_vector_codes WHERE `+in, args...)
		if err != nil {
			return nil, err
		}
		for rs.Next() {
			var (
				k   itemKey
				upd int64
				b   sql.RawBytes
			)
			if err := rs.Scan(&k.ns, &k.key, &upd, &b); err != nil {
				rs.Close()
				return nil, err
			}
			c.stats.codeRows.Add(1)
			bits, m, ok := decodeCode(nil, b, c.dims)
			if !ok {
				continue
			}
			it := got[k]
			if it == nil {
				it = &changedItem{}
				got[k] = it
			}
			it.updated = upd
			it.codes = append(it.codes, code{bits, m})
		}
		err = rs.Err()
		rs.Close()
		if err != nil {
			return nil, err
		}
	}
	return got, nil
}

// apply replaces the codes of keys with got's.
func (t *codeIndex) apply(keys []itemKey, got map[itemKey]*changedItem) {
	for _, k := range keys {
		if it := got[k]; it != nil {
			t.add(k.ns, k.key, it.updated, it.codes)
		} else {
			t.remove(k)
		}
	}
	t.compact()
}

// applyChanged reads the codes of keys from tx (generation gen) and
// applies them to the index if it still holds generation from.
func (c *vecCache) applyChanged(ctx context.Context, tx *sql.Tx, from, gen int64, keys []itemKey) (bool, error) {
	got, err := c.readCodes(ctx, tx, keys)
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
	c.stats.incremental.Add(1)
	if t.bytes() > c.budget {
		c.snap, c.tooBig = nil, true
		return false, nil
	}
	return true, nil
}

// load reads the index of the snapshot tx (generation q.gen): from the
// snapshot and the log since when they cover the store, from every code
// row otherwise (see loadRows). It installs it unless the cache holds a
// newer generation already, and reports whether the index now holds gen.
func (c *vecCache) load(ctx context.Context, tx *sql.Tx, q quantState) (bool, error) {
	var (
		centreRaw []byte
		snapGen   int64
	)
	if err := tx.QueryRowContext(ctx, `SELECT centre, snapshot_gen FROM store_vector_quant WHERE id = 0`).Scan(&centreRaw, &snapGen); err != nil {
		return false, err
	}
	centre, _ := decodeVector(nil, centreRaw)
	// Without a stored coverage a snapshot cannot be checked: not used.
	if q.stored.known && snapGen >= 0 && q.logFloor <= snapGen && snapGen <= q.gen && !q.snapshotGone {
		ok, err := c.loadSnapshot(ctx, tx, centre, snapGen, q)
		if ok || err != nil {
			return ok, err
		}
	}
	return c.loadCodes(ctx, tx, q, centre)
}

// loadRows is load from every code row.
func (c *vecCache) loadRows(ctx context.Context, tx *sql.Tx, q quantState) (bool, error) {
	var centreRaw []byte
	if err := tx.QueryRowContext(ctx, `SELECT centre FROM store_vector_quant WHERE id = 0`).Scan(&centreRaw); err != nil {
		return false, err
	}
	centre, _ := decodeVector(nil, centreRaw)
	return c.loadCodes(ctx, tx, q, centre)
}

// loadCodes reads every code row of the snapshot tx (generation q.gen)
// and installs them unless the cache holds a newer generation already. It
// reports whether the index now holds gen. Codes of other dimensions than
// the index's (left by an earlier configuration) are skipped; the
// coverage of the items with code rows is counted as they are read, and
// stored (by the next Batch) when the stored one differs.
func (c *vecCache) loadCodes(ctx context.Context, tx *sql.Tx, q quantState, centre []float32) (bool, error) {
	gen := q.gen
	// In primary-key order, an item's codes together: WITHOUT ROWID, the
	// scan is that order already, without sorting.
	rs, err := tx.QueryContext(ctx, `SELECT prefix, key, updated_at, code FROM store_vector_codes ORDER BY prefix, key, field_name`)
	if err != nil {
		return false, err
	}
	defer rs.Close()
	t := newCodeIndex(c.dims, centre)
	var (
		ns, key, b sql.RawBytes
		upd        int64
		open       = int32(-1) // slot being filled
		rows       int64
		// the coverage of every item with a code row, readable or not
		real            coverage
		lastNS, lastKey []byte
		nh              = nsHash("")
	)
	for rs.Next() {
		if err := rs.Scan(&ns, &key, &upd, &b); err != nil {
			return false, err
		}
		rows++
		if rows == 1 || !bytes.Equal(key, lastKey) || !bytes.Equal(ns, lastNS) {
			if rows == 1 || !bytes.Equal(ns, lastNS) {
				lastNS = append(lastNS[:0], ns...)
				nh = nsHash(string(lastNS))
			}
			lastKey = append(lastKey[:0], key...)
			real.add(keyHash(nh, lastKey))
		}
		var (
			m  codeMeta
			ok bool
		)
		if t.bits, m, ok = decodeCode(t.bits, b, c.dims); !ok {
			continue
		}
		if open < 0 || t.names[t.slots[open].ns] != string(ns) || !bytes.Equal(t.keyOf(&t.slots[open]), key) {
			id := t.internBytes(ns)
			s := codeSlot{updated: upd, ns: id, first: int32(len(t.meta))}
			if !t.appendSorted(key, s) {
				// SQLite's order is not Go's byte order in a UTF-16
				// database (New accepts any): the item goes to the tail.
				k := itemKey{t.names[id], string(key)}
				t.remove(k)
				t.push(k, s)
			}
			open = int32(len(t.slots) - 1)
		}
		t.meta = append(t.meta, m)
		t.slots[open].n++
		if rows%1024 == 0 && t.bytes() > c.budget {
			c.stats.codeRows.Add(rows)
			c.mu.Lock()
			c.tooBig = true
			c.mu.Unlock()
			return false, nil
		}
	}
	c.stats.codeRows.Add(rows)
	if err := rs.Err(); err != nil {
		return false, err
	}
	if t.bytes() > c.budget {
		c.mu.Lock()
		c.tooBig = true
		c.mu.Unlock()
		return false, nil
	}
	c.stats.fullLoads.Add(1)
	if len(t.meta) >= snapshotMinCodes {
		c.wantSnapshot.Store(true)
	}
	stored := real
	if q.stored.known {
		stored = q.stored.cov
	}
	if q.stored.known && real != stored {
		c.repair.Store(&coverageRepair{gen: gen, stored: stored, real: real})
	}
	return c.install(t, gen, stored.minus(t.cov)), nil
}

// install makes t, at generation gen, the index unless the cache holds a
// newer one already, and reports whether the cache holds gen. skew is
// what the stored coverage has more than t's (see vecCache.skew).
func (c *vecCache) install(t *codeIndex, gen int64, skew coverage) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.snap == nil || c.gen < gen {
		c.snap, c.gen, c.skew = t, gen, skew
	}
	return c.gen == gen
}
