package redissaver

import (
	"cmp"
	"container/heap"
	"context"
	"slices"

	"github.com/redis/go-redis/v9"

	"github.com/memvault/memvault/checkpointer"
)

// A Scan across threads is a k-way merge of the threads' indexes: each
// thread is a cursor over its index holding a batch of ids, newest first,
// and takes the next batch only when the merge has taken all of it. A
// listing holds a batch per thread, not what the limit allows of every
// thread (a listing with limit 1000 over 1 000 threads held a million
// ids), nor every id of the database when the engine filters metadata
// itself and so gives no limit.
const (
	// scanFillBudget bounds the ids the first batches of all threads
	// hold together (when that leaves each at least scanBatchMin).
	scanFillBudget = 4096
	// scanBatchMin is the first batch of a thread when many are merged.
	scanBatchMin = 8
	// scanBatchMax caps a batch; batches grow fourfold up to it.
	scanBatchMax = 256
)

// scanCursor is one thread of a merge.
type scanCursor struct {
	thread   string
	key      string     // the sorted set read
	min, max string     // its range still unread
	buf      []scanItem // read, not yet taken: id descending, namespace ascending
	more     bool       // the range may hold more than buf
	batch    int        // ids the next read asks for
}

// scanMerge merges the cursors of the threads a Scan reads into one
// sequence: id descending, then thread, then namespace ascending (the
// order the engine's other drivers list in).
type scanMerge struct {
	d       *driver
	q       checkpointer.DriverQuery
	h       cursorHeap
	pending []*scanCursor // taken to their end, with more to read
	left    int           // items still wanted; -1: no limit
	// held and maxHeld count the ids read and not yet taken, and the
	// most ever held at once.
	held, maxHeld int
}

// newScanMerge reads the first batch of every thread: one pipeline per
// scanThreadsPage threads (and one more for ids whose namespaces go
// past a batch).
func (d *driver) newScanMerge(ctx context.Context, threads []string, q checkpointer.DriverQuery) (*scanMerge, error) {
	m := &scanMerge{d: d, q: q, left: -1}
	if q.Limit > 0 {
		m.left = q.Limit
	}
	first := scanBatchMax
	if len(threads) > 0 {
		first = min(scanBatchMax, max(scanBatchMin, scanFillBudget/len(threads)))
	}
	for page := range slices.Chunk(threads, scanThreadsPage) {
		cs := make([]*scanCursor, len(page))
		for i, th := range page {
			key, by := d.scanRange(th, q)
			cs[i] = &scanCursor{thread: th, key: key, min: by.Min, max: by.Max, more: true, batch: m.cap(first)}
		}
		if err := m.read(ctx, cs); err != nil {
			return nil, err
		}
		for _, c := range cs {
			m.push(c)
		}
	}
	return m, nil
}

// cap bounds a batch by the items still wanted.
func (m *scanMerge) cap(n int) int {
	if m.left >= 0 {
		return max(1, min(n, m.left))
	}
	return n
}

// read reads the next batch of each cursor: one pipeline, and one more
// for the cursors whose batch ended in an id that may have other
// namespaces beyond it (members of one id come in descending namespace
// order, the merge takes them ascending, so an id is read whole).
func (m *scanMerge) read(ctx context.Context, cs []*scanCursor) error {
	d, q := m.d, m.q
	cmds := make([]*redis.StringSliceCmd, len(cs))
	_, err := d.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, c := range cs {
			cmds[i] = p.ZRevRangeByLex(ctx, c.key, &redis.ZRangeBy{Min: c.min, Max: c.max, Count: int64(c.batch)})
		}
		return nil
	})
	if err != nil {
		return err
	}
	rest := make([]*redis.StringSliceCmd, len(cs))
	if q.NS == nil {
		_, err = d.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
			for i, c := range cs {
				if ms := cmds[i].Val(); len(ms) == c.batch {
					last, _, _ := splitPair(ms[len(ms)-1])
					rest[i] = p.ZRangeByLex(ctx, c.key, &redis.ZRangeBy{Min: "[" + last + sep, Max: "(" + last + "\x01"})
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	for i, c := range cs {
		ms := cmds[i].Val()
		c.more = len(ms) == c.batch
		if len(ms) > 0 {
			lastMember := ms[len(ms)-1]
			if q.NS == nil {
				last, _, _ := splitPair(lastMember)
				c.max = "(" + last + sep // every id below last
			} else {
				c.max = "(" + lastMember
			}
		}
		if rest[i] != nil {
			for _, mb := range rest[i].Val() {
				if !slices.Contains(ms, mb) {
					ms = append(ms, mb)
				}
			}
		}
		c.buf = scanMembers(c.thread, q, ms)
		slices.SortFunc(c.buf, func(a, b scanItem) int { return cmp.Or(cmp.Compare(b.id, a.id), cmp.Compare(a.ns, b.ns)) })
		m.held += len(c.buf)
		c.batch = m.cap(min(scanBatchMax, c.batch*4))
	}
	m.maxHeld = max(m.maxHeld, m.held)
	return nil
}

// push puts a cursor in the merge: in the heap when it holds ids, among
// the pending when only its range does, nowhere when it is done.
func (m *scanMerge) push(c *scanCursor) {
	switch {
	case len(c.buf) > 0:
		heap.Push(&m.h, c)
	case c.more:
		m.pending = append(m.pending, c)
	}
}

// mustRead reports whether the merge must read before next can answer:
// a cursor taken to the end of its batch may hold the next item.
func (m *scanMerge) mustRead() bool { return len(m.pending) > 0 && m.left != 0 }

// fill reads the next batch of the pending cursors (one pipeline).
func (m *scanMerge) fill(ctx context.Context) error {
	for m.mustRead() {
		cs := m.pending
		m.pending = nil
		if err := m.read(ctx, cs); err != nil {
			return err
		}
		for _, c := range cs {
			m.push(c)
		}
	}
	return nil
}

// next returns the next item without taking it; false when the merge is
// done. fill must have run when mustRead said so.
func (m *scanMerge) next() (scanItem, bool) {
	if m.left == 0 || len(m.h) == 0 {
		return scanItem{}, false
	}
	return m.h[0].buf[0], true
}

// pop takes the item next returned.
func (m *scanMerge) pop() {
	c := m.h[0]
	c.buf[0] = scanItem{}
	c.buf = c.buf[1:]
	m.held--
	if m.left > 0 {
		m.left--
	}
	if len(c.buf) > 0 {
		heap.Fix(&m.h, 0)
		return
	}
	heap.Pop(&m.h)
	c.buf = nil
	m.push(c)
}

// cursorHeap orders cursors by their next item.
type cursorHeap []*scanCursor

func (h cursorHeap) Len() int { return len(h) }

func (h cursorHeap) Less(i, j int) bool {
	a, b := h[i].buf[0], h[j].buf[0]
	return cmp.Or(cmp.Compare(b.id, a.id), cmp.Compare(a.thread, b.thread), cmp.Compare(a.ns, b.ns)) < 0
}

func (h cursorHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }

func (h *cursorHeap) Push(x any) { *h = append(*h, x.(*scanCursor)) }

func (h *cursorHeap) Pop() any {
	old := *h
	c := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	return c
}
