package vecindex

import (
	"bytes"
	"context"
	"errors"
	"slices"
)

// A load from the snapshot of a cache with a Reader (SetReader) reads the
// parts of sign bits, applies the log, installs the index and returns;
// the search that asked for it goes on by sign bits and fine parts (as
// without middle parts), while a goroutine reads the snapshot's parts of
// middle parts on a read of its own and puts them in (fillMid). At 100 000
// × 1 536 the middle parts are 97 MB of the snapshot's 117: reading them
// was two thirds of the first search after opening a store (~300 ms of
// CPU; issue 32). Until the fill is in, the codes of the snapshot stay at
// their positions (codeIndex.filling: no compaction), so that the fill's
// i-th middle part is the i-th code's whatever writes came meanwhile
// (they append codes, with their own middle parts, and mark removed
// ones dead). A fill that cannot complete (the snapshot replaced or
// malformed meanwhile) drops the index, and later loads read the middle
// parts themselves (syncMid), falling back to every code row as before;
// Close stops a fill and waits for it.

// errSnapshotMoved is a fill's error when the stored snapshot is no longer
// the one its load read.
var errSnapshotMoved = errors.New("vecindex: snapshot replaced during fill")

// installFilling installs t, at generation gen, loaded from the snapshot
// of generation snapGen without the middle parts of its first codes codes,
// and starts reading those behind (fillMid). It reports whether the cache
// holds gen.
func (c *Cache) installFilling(t *codeIndex, gen, snapGen int64, codes int) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.snap == nil || c.gen < gen {
		if j := c.fill; j != nil {
			// The fill of the index t replaces, not started yet: dropped.
			j.t.filling = false
			c.fill = nil
			c.bg.Done()
		}
		c.snap, c.gen, c.skew = t, gen, Coverage{}
		switch {
		case c.closed || t.midOff:
			// Closing, or over budget with middle parts: none to read.
			t.filling = false
		case t.bytes()+int64(codes)*int64(midBytes(t.dims)+8) > c.budget:
			// They would not fit: the index keeps the sign bits alone,
			// as a load that read them drops them (codeIndex.fits).
			t.filling = false
			t.dropMid()
		default:
			// Started when the search that loaded t has returned
			// (StartFill), so that it does not share the machine's
			// cores with the fill.
			c.bg.Add(1)
			c.fill = &fillJob{t: t, snapGen: snapGen, codes: codes}
		}
	}
	return c.gen == gen
}

// StartFill starts reading the middle parts a load from the snapshot left
// behind (see installFilling), if any. The caller of Refresh and Top calls
// it once its search has returned, not before: the fill reads the
// snapshot's middle parts on both of a small machine's cores, and started
// while the search that loaded the index was still reading the values of
// its results it made that first search pay for part of it. Close and
// WaitFill start a fill left pending too.
func (c *Cache) StartFill() { c.startFill() }

// fillJob is a fill installFilling made and startFill starts.
type fillJob struct {
	t       *codeIndex
	snapGen int64
	codes   int
}

// startFill starts the fill a load left, if any.
func (c *Cache) startFill() {
	c.mu.Lock()
	j := c.fill
	c.fill = nil
	if j != nil && c.snap != j.t {
		// The index was replaced meanwhile: nothing to fill.
		j.t.filling = false
		j = nil
		c.bg.Done()
	}
	c.mu.Unlock()
	if j != nil {
		go c.fillMid(j.t, j.snapGen, j.codes)
	}
}

// fillMid reads the middle parts of the first codes codes of t, loaded
// from the snapshot of generation snapGen, and puts them in while the
// cache still holds t.
func (c *Cache) fillMid(t *codeIndex, snapGen int64, codes int) {
	defer c.bg.Done()
	f, err := c.readMid(c.bgCtx, t.dims, snapGen, codes)
	if errors.Is(err, errSnapshotMoved) {
		// A write dropped or replaced the snapshot since the load (a
		// delete drops it): the code rows have the fine parts.
		f.midMem.free()
		f, err = c.readMidFromCodes(c.bgCtx, t, codes)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if err != nil {
		f.midMem.free()
		t.filling = false
		if c.snap == t {
			// Without its middle parts the index is right but slow, and a
			// snapshot taken of it would keep it so: the next search
			// loads again, reading them itself.
			c.snap = nil
			c.Stats.MidFailed.Add(1)
		}
		if c.bgCtx.Err() == nil {
			c.syncMid.Store(true)
		}
		return
	}
	if c.snap != t || t.midOff {
		// Replaced (a reload) or over budget meanwhile.
		f.midMem.free()
		t.filling = false
		return
	}
	// Codes appended since the load (the log's, writes') follow: with
	// their own middle parts when the index made room for them, none
	// otherwise.
	mb := midBytes(t.dims)
	total := len(t.meta)
	f.midRoom((total-codes)*mb, 0)
	if t.mid != nil {
		f.mid = append(f.mid, t.mid[codes*mb:total*mb]...)
		f.mids = append(f.mids, t.mids[codes:total]...)
	} else {
		at := len(f.mid)
		f.mid = f.mid[:at+(total-codes)*mb]
		clear(f.mid[at:])
		for range total - codes {
			f.mids = append(f.mids, noMid)
		}
	}
	old := t.midMem
	t.mid, t.midMem, t.mids = f.mid, f.midMem, f.mids
	old.free()
	t.filling = false
	c.Stats.MidFills.Add(1)
	if !t.fits(c.budget) {
		c.snap, c.tooBig = nil, true
		return
	}
	// A delete while the fill was under way asked for a snapshot.
	c.resnapLocked()
}

// readMid reads the snapshot's middle parts of codes codes, on a read of
// c's Reader, into an index that holds them alone.
func (c *Cache) readMid(ctx context.Context, dims int, snapGen int64, codes int) (*codeIndex, error) {
	f := newCodeIndex(dims, nil)
	src, done, err := c.reader(ctx)
	if err != nil {
		return f, err
	}
	defer done()
	_, g, err := src.Quant(ctx)
	if err != nil {
		return f, err
	}
	if g != snapGen {
		return f, errSnapshotMoved
	}
	var perr error
	err = src.SnapshotParts(ctx, func(p []byte) bool {
		if !bytes.HasPrefix(p, []byte(midMagic)) {
			if f.mid != nil {
				// Parts of sign bits come before every part of middle
				// parts (see deserialize).
				perr = ErrSnapshot
				return false
			}
			return true // sign bits: the load read them
		}
		if perr = ctx.Err(); perr == nil {
			perr = f.deserializeMid(p, snapGen, codes)
		}
		return perr == nil
	})
	switch {
	case err != nil:
		return f, err
	case perr != nil:
		return f, perr
	case len(f.mids) != codes:
		return f, ErrSnapshot
	}
	return f, nil
}

// readMidFromCodes derives the middle parts of the first codes codes of t
// from the fine parts of the store's code rows, on a read of c's Reader:
// the fill of a load whose snapshot a write dropped or replaced since. A
// code gets the middle part of the row of its item whose sign bits and
// metadata are its own (an item rewritten since has other codes, which
// writes add to t with their middle parts); the others get none.
func (c *Cache) readMidFromCodes(ctx context.Context, t *codeIndex, codes int) (*codeIndex, error) {
	// What of t the rows are matched against: the slots of the load's
	// codes copied (a write's remove flips live in place), the rest read
	// in place, where writes only append beyond codes.
	c.mu.RLock()
	var slots []codeSlot
	for i := range t.slots {
		if s := t.slots[i]; s.live && int(s.first) < codes {
			slots = append(slots, s)
		}
	}
	names, keys, bits, meta := t.names[:len(t.names):len(t.names)], t.keys[:len(t.keys):len(t.keys)], t.bits[:codes*t.words], t.meta[:codes]
	dims, words := t.dims, t.words
	c.mu.RUnlock()
	less := func(s *codeSlot, ns, key []byte) int {
		if c := bytes.Compare([]byte(names[s.ns]), ns); c != 0 {
			return c
		}
		return bytes.Compare(keys[s.keyAt:s.keyAt+int(s.keyLen)], key)
	}
	slices.SortFunc(slots, func(a, b codeSlot) int {
		return less(&a, []byte(names[b.ns]), keys[b.keyAt:b.keyAt+int(b.keyLen)])
	})
	f := newCodeIndex(dims, nil)
	mb := midBytes(dims)
	f.midRoom((codes+midSlack(codes))*mb, 0)
	f.mid = f.mid[:codes*mb]
	f.mids = make([]midMeta, codes, codes+midSlack(codes))
	for i := range f.mids {
		f.mids[i] = noMid
	}
	src, done, err := c.reader(ctx)
	if err != nil {
		return f, err
	}
	defer done()
	var (
		at int // slots[at] is the first slot not below the row
		w  []uint64
	)
	err = src.AllCodes(ctx, func(ns, key []byte, _ int64, b []byte) bool {
		if ctx.Err() != nil {
			return false
		}
		for at < len(slots) && less(&slots[at], ns, key) < 0 {
			at++
		}
		if at == len(slots) || less(&slots[at], ns, key) != 0 {
			return true
		}
		fn, ok := fineTail(b, dims)
		if !ok {
			return true
		}
		var m codeMeta
		if w, m, ok = decodeCode(w[:0], b, dims); !ok {
			return true
		}
		s := &slots[at]
		for j := int(s.first); j < int(s.first+s.n); j++ {
			if f.mids[j] == noMid && meta[j] == m && slices.Equal(bits[j*words:(j+1)*words], w) {
				// In place: the slice's capacity runs on to the arena's end.
				_, f.mids[j] = appendMid(f.mid[j*mb:j*mb], &fn)
				break
			}
		}
		return true
	})
	if err == nil {
		err = ctx.Err()
	}
	return f, err
}
