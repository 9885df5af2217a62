package vecindex

import "context"

// A delete drops the stored snapshot (store/sqlitestore, mongostore: it
// held the deleted item's namespace, key and code), so that the next
// process to open the store read every code row, about 2 s of CPU at
// 100 000 × 1 536 instead of the snapshot's ~80 ms, and every later one
// too until a full load wrote a new snapshot: a store that ever deleted
// (its TTL sweeper's deletes too) missed the first-search target for
// good. A cache with a SnapshotWriter therefore stores a new snapshot of
// its own index behind a write that deleted items, once it applied the
// write (Committed): the index then holds no code of the deleted items,
// and the driver writes the snapshot only at the generation it is of,
// so that a snapshot never holds an item deleted since. It is written
// on a goroutine of the cache's (counted in bg: Close waits for it, so
// that a process that deletes and exits leaves a snapshot), after the
// fill of the middle parts when one is under way (a snapshot without
// them would keep the next process's index slow).

// SnapshotWriter stores the snapshot take returns (the index's generation
// and its parts; ok false: none to store) when the storage has none and
// the generation is still the storage's, and reports whether the storage
// now holds a snapshot. It calls take at most once, outside any write
// transaction of its own if it can (take serializes the index under the
// cache's read lock).
type SnapshotWriter func(ctx context.Context, take func() (gen int64, parts [][]byte, ok bool)) (held bool, err error)

// resnapTries bounds the snapshots written behind one delete: each is
// refused when another write moved the generation meanwhile.
const resnapTries = 3

// SetSnapshotWriter lets the cache store a new snapshot of its index
// behind the writes that deleted items (see above), before its first use.
func (c *Cache) SetSnapshotWriter(w SnapshotWriter) { c.snapWriter = w }

// resnapLocked starts writing the snapshot behind a delete, if one is
// asked for (resnap) and none is being written; c.mu is held.
func (c *Cache) resnapLocked() {
	switch {
	case c.snapWriter == nil || c.closed || !c.resnap.Load():
	case c.snapping:
		c.snapAgain = true
	case c.snap == nil || c.snap.filling:
		// Not yet: no index (the load that makes one stores a snapshot
		// when it read every code), or its middle parts are being read
		// (fillMid calls again once they are in).
	default:
		c.snapping = true
		c.bg.Add(1)
		go c.resnapBehind()
	}
}

// resnapBehind writes the snapshot of the index, again while deletes
// came meanwhile or the storage refused it because another write moved
// the generation, at most resnapTries times.
func (c *Cache) resnapBehind() {
	defer c.bg.Done()
	for try := 1; ; try++ {
		held, err := c.snapWriter(context.Background(), c.takeResnap)
		c.mu.Lock()
		again := c.snapAgain
		c.snapAgain = false
		if held && !again {
			c.resnap.Store(false)
		}
		if (held || err != nil) && !again || try == resnapTries || c.closed || c.snap == nil || c.snap.filling {
			// Stored; or the storage failed, or the index is gone or
			// being filled: a later delete, or fillMid, asks again.
			c.snapping = false
			c.mu.Unlock()
			return
		}
		c.resnap.Store(true)
		c.mu.Unlock()
	}
}

// takeResnap is a SnapshotWriter's take: the index's generation and
// parts, when a delete still asks for them.
func (c *Cache) takeResnap() (gen int64, parts [][]byte, ok bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.snap == nil || c.snap.filling || !c.resnap.CompareAndSwap(true, false) {
		return 0, nil, false
	}
	return c.gen, c.snap.serialize(c.gen), true
}

// resnapMissing asks for the index, loaded at generation gen by a search
// that found no snapshot stored, to be stored as one behind it (once per
// index: the writer stores it or finds one stored meanwhile). A load
// that read every code asks for one already (wantSnapshot); this covers
// an index refreshed from the log past a delete of another process that
// held no index of its own.
func (c *Cache) resnapMissing(gen int64) {
	asks := func() bool {
		t := c.snap
		return t != nil && c.gen == gen && !c.wantSnapshot.Load() && len(t.meta)-t.dead >= SnapshotMinCodes && t != c.resnapOf
	}
	// Every search of a store below SnapshotMinCodes finds none: the
	// read lock, which searches share, tells it.
	c.mu.RLock()
	ok := asks()
	c.mu.RUnlock()
	if !ok {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !asks() {
		return
	}
	c.resnapOf = c.snap
	c.resnap.Store(true)
	c.resnapLocked()
}
