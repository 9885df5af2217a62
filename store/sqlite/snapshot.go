package sqlite

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"math"
	"slices"
	"sync"
)

// The snapshot is the code index of one generation serialized into
// store_vector_snapshot parts of about snapshotPart bytes, so that opening
// a store reads a few large rows instead of a row per vector, then the
// codes of the items logged since. A process that had to read every code
// (no snapshot, or one too old) stores a new one after its search, in its
// own write transaction; a recode drops it.
//
// A part is a header, then a sequence of items, each
//
//	uvarint len(namespace), namespace, uvarint len(key), key,
//	varint updated_at, uvarint n, then n codes of the index's dimensions,
//
// in increasing bytewise (Go's bytes.Compare) order of namespace, then
// key, across the parts, so that a load appends them to the sorted part of
// the index (no key map to build) and a repeated or misplaced key shows as
// a malformed snapshot. The header is snapshotMagic, the uvarint
// dimension count and the uvarint generation the snapshot is of: a
// snapshot of another format, of codes of other dimensions (with as many
// code bytes), or whose parts are not those of store_vector_quant's
// snapshot_gen (rows put back from another copy) is not loaded.
//
// A well-formed snapshot of the right generation may still not cover the
// store: rows of it deleted or rewritten by hand or a tool, log rows since
// it deleted. So the index it yields, with the log applied, is used only
// when its coverage (see coverage.go: item count and key checksum) equals
// the one stored beside the code rows; otherwise the load reads every code
// row, and the next Batch stores a new snapshot.
const snapshotPart = 1 << 20

// snapshotMagic begins every part of the current format (format 1 had no
// header; format 2 no generation: both read as malformed, and the load
// that then reads every code writes a new snapshot).
const snapshotMagic = "mvcs3"

// snapshotMinCodes is the fewest codes worth a snapshot (reading fewer
// rows is quick); a variable so that tests can lower it.
var snapshotMinCodes = 16384

// snapshotStale is how many items changed since the snapshot make a load
// store a new one.
const snapshotStale = 2048

var errSnapshot = errors.New("sqlite: malformed index snapshot")

// serialize returns t's parts, t being the index of generation gen.
func (t *codeIndex) serialize(gen int64) [][]byte {
	order := t.liveInKeyOrder()
	header := binary.AppendUvarint(binary.AppendUvarint([]byte(snapshotMagic), uint64(t.dims)), uint64(gen))
	var (
		parts [][]byte
		cur   []byte
	)
	size := codeHeader + 8*t.words
	for _, i := range order {
		s := &t.slots[i]
		if cur == nil {
			cur = append(make([]byte, 0, snapshotPart+size*int(s.n)+256), header...)
		}
		ns := t.names[s.ns]
		cur = binary.AppendUvarint(cur, uint64(len(ns)))
		cur = append(cur, ns...)
		key := t.keyOf(s)
		cur = binary.AppendUvarint(cur, uint64(len(key)))
		cur = append(cur, key...)
		cur = binary.AppendVarint(cur, s.updated)
		cur = binary.AppendUvarint(cur, uint64(s.n))
		cur = slices.Grow(cur, size*int(s.n))
		for j := int(s.first); j < int(s.first+s.n); j++ {
			m := &t.meta[j]
			b := cur[len(cur) : len(cur)+size]
			clear(b)
			b[0] = codeFormat
			if m.centred {
				b[1] = codeCentred
			}
			binary.LittleEndian.PutUint32(b[2:], math.Float32bits(m.nv))
			binary.LittleEndian.PutUint32(b[6:], math.Float32bits(m.nu))
			binary.LittleEndian.PutUint32(b[10:], math.Float32bits(m.vc))
			for i, x := range t.bits[j*t.words : (j+1)*t.words] {
				binary.LittleEndian.PutUint64(b[codeHeader+8*i:], x)
			}
			cur = cur[:len(cur)+size]
		}
		if len(cur) >= snapshotPart {
			parts = append(parts, cur)
			cur = nil
		}
	}
	if cur != nil {
		parts = append(parts, cur)
	}
	return parts
}

// deserialize appends the items of a part of the snapshot of generation
// gen to t.
func (t *codeIndex) deserialize(p []byte, gen int64) error {
	rest, ok := bytes.CutPrefix(p, []byte(snapshotMagic))
	if !ok {
		return errSnapshot
	}
	d, k := binary.Uvarint(rest)
	if k <= 0 || d != uint64(t.dims) {
		return errSnapshot
	}
	rest = rest[k:]
	g, k := binary.Uvarint(rest)
	if k <= 0 || gen < 0 || g != uint64(gen) {
		return errSnapshot
	}
	p = rest[k:]
	size := codeHeader + 8*t.words
	field := func() ([]byte, bool) {
		n, k := binary.Uvarint(p)
		if k <= 0 || n > uint64(len(p)-k) {
			return nil, false
		}
		b := p[k : k+int(n)]
		p = p[k+int(n):]
		return b, true
	}
	for len(p) > 0 {
		ns, ok1 := field()
		key, ok2 := field()
		if !ok1 || !ok2 {
			return errSnapshot
		}
		upd, k := binary.Varint(p)
		if k <= 0 {
			return errSnapshot
		}
		p = p[k:]
		n, k := binary.Uvarint(p)
		if k <= 0 || n == 0 || n > uint64(len(p)-k)/uint64(size) {
			return errSnapshot
		}
		p = p[k:]
		id := t.internBytes(ns)
		if !t.appendSorted(key, codeSlot{updated: upd, ns: id, first: int32(len(t.meta)), n: int32(n)}) {
			return errSnapshot // out of order, or repeated
		}
		for range n {
			var (
				m  codeMeta
				ok bool
			)
			if t.bits, m, ok = decodeCode(t.bits, p[:size], t.dims); !ok {
				return errSnapshot
			}
			t.meta = append(t.meta, m)
			p = p[size:]
		}
	}
	return nil
}

// loadSnapshot loads the snapshot (generation snapGen) and the codes of the
// items logged since, up to generation q.gen. It reports false, without
// error, when the snapshot cannot serve (malformed, the log asks for a
// full load, or the index they make does not cover the store): the caller
// then reads every code.
func (c *vecCache) loadSnapshot(ctx context.Context, tx *sql.Tx, centre []float32, snapGen int64, q quantState) (bool, error) {
	gen := q.gen
	t := newCodeIndex(c.dims, centre)
	// Size the index from the snapshot's bytes (length() of a blob reads
	// no content), at most the cache's budget: each code takes at least
	// its code bytes plus a few of key and header.
	var total int64
	if err := tx.QueryRowContext(ctx, `SELECT coalesce(sum(length(data)), 0) FROM store_vector_snapshot`).Scan(&total); err != nil {
		return false, err
	}
	perCode := int64(codeHeader + 8*t.words + 8)
	refused := false // malformed, or over budget
	err := readParts(ctx, tx, func(p []byte) bool {
		if len(t.slots) == 0 {
			// Here, not before: the next part is being read meanwhile.
			t.reserve(int(min(total, c.budget) / perCode))
		}
		refused = t.deserialize(p, snapGen) != nil || t.bytes() > c.budget
		return !refused
	})
	if err != nil || refused {
		// The per-row load then reads every code (and marks the cache too
		// big if it is).
		return false, err
	}
	keys, full, err := c.changed(ctx, tx, snapGen)
	if err != nil || full {
		return false, err
	}
	got, err := c.readCodes(ctx, tx, keys)
	if err != nil {
		return false, err
	}
	t.apply(keys, got)
	if t.bytes() > c.budget {
		return false, nil
	}
	if t.cov != q.stored.cov {
		// Rows of the snapshot or of the log are gone or were rewritten.
		c.stats.uncovered.Add(1)
		return false, nil
	}
	if len(keys) > snapshotStale {
		c.wantSnapshot.Store(true)
	}
	c.stats.snapshots.Add(1)
	return c.install(t, gen, coverage{}), nil
}

// readParts calls use with each part of the snapshot, in order, until it
// returns false. It reads the next part from SQLite while use decodes the
// last (on two cores each half of a first search's load takes about as
// long as the other); the parts pass through two buffers, reused. When it
// returns, the rows are closed and tx is the caller's alone again.
func readParts(ctx context.Context, tx *sql.Tx, use func([]byte) bool) error {
	rs, err := tx.QueryContext(ctx, `SELECT data FROM store_vector_snapshot ORDER BY part`)
	if err != nil {
		return err
	}
	var (
		full    = make(chan []byte, 1)
		free    = make(chan []byte, 2)
		stop    = make(chan struct{})
		halt    = sync.OnceFunc(func() { close(stop) })
		readErr error
	)
	free <- nil
	free <- nil
	go func() {
		// Closing full last tells the caller that the rows are closed and
		// readErr is set.
		defer close(full)
		defer rs.Close()
		for {
			select {
			case <-stop:
				return
			default:
			}
			if !rs.Next() {
				break
			}
			var raw sql.RawBytes
			if readErr = rs.Scan(&raw); readErr != nil {
				return
			}
			var buf []byte
			select {
			case buf = <-free:
			case <-stop:
				return
			}
			select {
			case full <- append(buf[:0], raw...):
			case <-stop:
				return
			}
		}
		readErr = rs.Err()
	}()
	defer func() {
		// Also when use panics: the reader stops, and tx is free again
		// before the panic goes on.
		halt()
		for range full {
		}
	}()
	for p := range full {
		if !use(p) {
			halt()
			break
		}
		free <- p
	}
	// After an early stop the reader may still be running: readErr is
	// its until full is closed, and the deferred drain runs too late for
	// the return value.
	for range full {
	}
	return readErr
}

// maybeSnapshot stores the index as the snapshot when a load asked for
// it, and the coverage of the code rows that a load counted when the
// stored one differs. It is an optimisation of later opens: its failure
// leaves the previous snapshot (or none) and coverage, which loads remain
// correct with, and is not the caller's error.
func (s *Store) maybeSnapshot(ctx context.Context) {
	c := s.cache
	if r := c.repair.Swap(nil); r != nil {
		s.repairCoverage(ctx, r)
	}
	if !c.wantSnapshot.CompareAndSwap(true, false) {
		return
	}
	t, gen, parts := func() (*codeIndex, int64, [][]byte) {
		c.mu.RLock()
		defer c.mu.RUnlock()
		if c.snap == nil {
			return nil, 0, nil
		}
		return c.snap, c.gen, c.snap.serialize(c.gen)
	}()
	if t == nil {
		return
	}
	_ = s.db.Write(ctx, func(tx *sql.Tx) error {
		var cur, codesGen, floor int64
		if err := tx.QueryRowContext(ctx, `SELECT g.gen, q.codes_gen, q.log_floor FROM store_generation g, store_vector_quant q
			WHERE g.id = 0 AND q.id = 0`).Scan(&cur, &codesGen, &floor); err != nil {
			return err
		}
		// Only the current generation is written: an index of an older
		// one could hold an item deleted since, whose delete dropped the
		// snapshot so that its name and code leave the file.
		if codesGen != cur || gen != cur {
			return nil
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM store_vector_snapshot`); err != nil {
			return err
		}
		for i, p := range parts {
			if _, err := tx.ExecContext(ctx, `INSERT INTO store_vector_snapshot (part, data) VALUES (?, ?)`, i, p); err != nil {
				return err
			}
		}
		_, err := tx.ExecContext(ctx, `UPDATE store_vector_quant SET snapshot_gen = ? WHERE id = 0`, gen)
		return err
	})
}

// repairCoverage stores the coverage of the code rows that a load counted
// at generation r.gen, if that is still the database's generation: a
// build that did not keep it wrote codes. Until then every load of this
// and other processes reads every code row, and this process's index is
// compared with the stored coverage through its skew, which follows.
func (s *Store) repairCoverage(ctx context.Context, r *coverageRepair) {
	var done bool
	_ = s.db.Write(ctx, func(tx *sql.Tx) error {
		done = false
		res, err := tx.ExecContext(ctx, `UPDATE store_vector_quant SET code_items = ?, code_sum = ?
			WHERE id = 0 AND codes_gen = ? AND (SELECT gen FROM store_generation WHERE id = 0) = ?`,
			r.real.items, int64(r.real.sum), r.gen, r.gen)
		if err != nil {
			return err
		}
		n, err := res.RowsAffected()
		done = n == 1
		return err
	})
	if !done {
		return
	}
	c := s.cache
	c.mu.Lock()
	if c.snap != nil && c.gen == r.gen {
		c.skew = c.skew.plus(r.real.minus(r.stored))
	}
	c.mu.Unlock()
}
