package vecindex

import (
	"bytes"
	"cmp"
	"slices"
	"strings"
)

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
	tail   map[Key]int32 // the live slots after the sorted ones
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
	cov Coverage
	// mid holds the middle part of each code (see mid.go), midBytes(dims)
	// bytes a code, and mids its scale, while some code has one (nil
	// until then); midOff: the index keeps none (over budget with them).
	mid    []byte
	midMem *arena // mid's memory: appends stay within its capacity (midRoom)
	mids   []midMeta
	midOff bool
	// filling: the middle parts of the codes a snapshot load read (the
	// first of meta) are being read behind (see fillMid); until they are
	// in, those codes have none, and compact leaves every code where it is.
	filling bool
}

type codeSlot struct {
	updated  int64
	keyAt    int // the key is keys[keyAt:keyAt+keyLen]
	keyLen   int32
	ns       int32
	first, n int32
	live     bool
}

func newCodeIndex(dims int, centre []float32) *codeIndex {
	return &codeIndex{dims: dims, words: codeWords(dims), centre: CentreOf(centre, dims), ns: map[string]int32{}}
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

// pushMid records the middle part of the code just appended to meta:
// derived from fine part f, or raw levels lv with scale mm, or none (both
// nil). The arrays are made at the first code that has one, room for as
// many codes as meta has.
func (t *codeIndex) pushMid(f *fine, lv []byte, mm midMeta) {
	if t.midOff {
		return
	}
	mb := midBytes(t.dims)
	if t.mid == nil {
		if f == nil && lv == nil {
			return
		}
		n := len(t.meta) - 1
		t.midRoom(n*mb, max(cap(t.meta), n+1)*mb)
		t.mid = t.mid[:n*mb] // zeroed
		t.mids = make([]midMeta, n, max(cap(t.meta), n+1))
		for i := range t.mids {
			t.mids[i] = noMid
		}
	}
	t.midRoom(mb, 0)
	switch {
	case f != nil:
		t.mid, mm = appendMid(t.mid, f)
	case lv != nil:
		t.mid = append(t.mid, lv[:mb]...)
	default:
		at := len(t.mid)
		t.mid = slices.Grow(t.mid, mb)[:at+mb]
		clear(t.mid[at:])
		mm = noMid
	}
	t.mids = append(t.mids, mm)
}

// dropMid drops the middle parts, for good: the index keeps the sign bits
// alone (over budget with them).
func (t *codeIndex) dropMid() {
	t.mid, t.midMem, t.mids, t.midOff = nil, nil, nil, true
}

// midOf returns code j's middle part, ok false when it has none.
func (t *codeIndex) midOf(j int) (lv []byte, mm *midMeta, ok bool) {
	if t.mid == nil || t.mids[j].enorm < 0 {
		return nil, nil, false
	}
	mb := midBytes(t.dims)
	return t.mid[j*mb : (j+1)*mb], &t.mids[j], true
}

// fits reports whether t fits in budget bytes, dropping its middle parts
// first when that makes it fit.
func (t *codeIndex) fits(budget int64) bool {
	if t.bytes() <= budget {
		return true
	}
	t.dropMid()
	return t.bytes() <= budget
}

func (t *codeIndex) intern(ns string) int32 {
	if id, ok := t.ns[ns]; ok {
		return id
	}
	id := int32(len(t.names))
	t.ns[ns] = id
	t.names = append(t.names, ns)
	t.nsh = append(t.nsh, NSHash(ns))
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

// KeyOf is s's item key, its key copied out of the arena.
func (t *codeIndex) itemOf(s *codeSlot) Key {
	return Key{NS: t.names[s.ns], Key: string(t.keyOf(s))}
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
func (t *codeIndex) compareSlotKey(s *codeSlot, k Key) int {
	if c := strings.Compare(t.names[s.ns], k.NS); c != 0 {
		return c
	}
	a := t.keyOf(s)
	for i := range min(len(a), len(k.Key)) {
		if a[i] != k.Key[i] {
			return cmp.Compare(a[i], k.Key[i])
		}
	}
	return cmp.Compare(len(a), len(k.Key))
}

// lookup returns the slot of k's live item.
func (t *codeIndex) lookup(k Key) (int32, bool) {
	i, found := slices.BinarySearchFunc(t.slots[:t.sorted], k, func(s codeSlot, k Key) int {
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
	t.cov.Add(KeyHash(t.nsh[s.ns], key))
	return true
}

// push appends slot s, holding item k (s.ns must be k's namespace), and
// reports false, appending nothing, when k has a live slot already.
func (t *codeIndex) push(k Key, s codeSlot) bool {
	if t.appendSorted([]byte(k.Key), s) {
		return true
	}
	if _, dup := t.lookup(k); dup {
		return false
	}
	if t.tail == nil {
		t.tail = map[Key]int32{}
	}
	t.tail[k] = int32(len(t.slots))
	t.tailKeyBytes += len(k.NS) + len(k.Key)
	s.keyAt, s.keyLen, s.live = len(t.keys), int32(len(k.Key)), true
	t.keys = append(t.keys, k.Key...)
	t.slots = append(t.slots, s)
	t.live++
	t.cov.Add(KeyHash(t.nsh[s.ns], k.Key))
	return true
}

// add appends an item's codes (all of t.dims dimensions).
func (t *codeIndex) add(ns, key string, updated int64, codes []code) {
	t.remove(Key{NS: ns, Key: key})
	if len(codes) == 0 {
		return
	}
	id := t.intern(ns)
	t.push(Key{NS: t.names[id], Key: key}, codeSlot{updated: updated, ns: id, first: int32(len(t.meta)), n: int32(len(codes))})
	for _, c := range codes {
		t.bits = append(t.bits, c.bits...)
		t.meta = append(t.meta, c.meta)
		if c.mid != nil {
			t.pushMid(nil, c.mid, c.mm)
		} else {
			t.pushMid(nil, nil, noMid)
		}
	}
}

func (t *codeIndex) remove(k Key) {
	i, ok := t.lookup(k)
	if !ok {
		return
	}
	t.slots[i].live = false
	t.dead += int(t.slots[i].n)
	t.live--
	t.cov.Sub(KeyHash(t.nsh[t.slots[i].ns], k.Key))
	if int(i) >= t.sorted {
		delete(t.tail, k)
		t.tailKeyBytes -= len(k.NS) + len(k.Key)
	}
}

// compact drops dead slots once they hold half of the codes, and puts the
// live ones in key order: every slot is sorted again and the tail empty,
// so that a long-lived index, whose rewritten items all land in the tail,
// does not drift back into a map of every key.
func (t *codeIndex) compact() {
	if t.filling || t.dead == 0 || 2*t.dead < len(t.meta) {
		return
	}
	c := newCodeIndex(t.dims, t.centre)
	c.midOff = t.midOff
	c.slots = make([]codeSlot, 0, t.live)
	c.keys = make([]byte, 0, len(t.keys))
	c.bits = make([]uint64, 0, len(t.bits)-t.dead*t.words)
	c.meta = make([]codeMeta, 0, len(t.meta)-t.dead)
	for _, i := range t.liveInKeyOrder() {
		s := &t.slots[i]
		ns := c.intern(t.names[s.ns])
		c.appendSorted(t.keyOf(s), codeSlot{updated: s.updated, ns: ns, first: int32(len(c.meta)), n: s.n})
		c.bits = append(c.bits, t.bits[int(s.first)*t.words:int(s.first+s.n)*t.words]...)
		for j := int(s.first); j < int(s.first+s.n); j++ {
			c.meta = append(c.meta, t.meta[j])
			if lv, mm, ok := t.midOf(j); ok {
				c.pushMid(nil, lv, *mm)
			} else {
				c.pushMid(nil, nil, noMid)
			}
		}
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
	return int64(8*len(t.bits)+16*len(t.meta)+len(t.keys)+t.tailKeyBytes+len(t.mid)+8*len(t.mids)) + int64(len(t.slots))*40 + int64(len(t.tail))*64
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
// Queries): it reads no keys, and the caller holds the cache's lock.
func (t *codeIndex) estimators(prefix string, qs Queries) (ests []*Estimator, missing []string) {
	ests = make([]*Estimator, len(t.names))
	for i, n := range t.names {
		if !under(n, prefix) {
			continue
		}
		e, known := qs.Estimator(n, t.centre)
		if !known {
			missing = append(missing, n)
		}
		ests[i] = e
	}
	return ests, missing
}

// estimateAll estimates every live item of a namespace with an estimator
// in ests (see estimators) by its best code, skipping those in skip.
func (t *codeIndex) estimateAll(ests []*Estimator, skip map[Key]bool) []approx {
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
