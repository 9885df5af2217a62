package vecindex

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"math"
	"slices"
	"strconv"
)

// The snapshot is the code index of one generation serialized into
// parts of about snapshotPart bytes (store/sqlitestore: store_vector_snapshot
// rows), so that opening
// a store reads a few large rows instead of a row per vector, then the
// codes of the items logged since. A process that had to read every code
// (no snapshot, or one too old) stores a new one after its search, in its
// own write transaction; a recode drops it, and so does a delete, behind
// which the process that deleted stores a new one (resnap.go).
//
// A part is a header, then a sequence of items, then a checksum (see
// sealPart); each item is
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
// code bytes), or whose parts are not those of the generation the
// storage names (Source.Quant) (rows put back from another copy) is not loaded.
//
// A well-formed snapshot of the right generation may still not cover the
// store: rows of it deleted or rewritten by hand or a tool, log rows since
// it deleted. So the index it yields, with the log applied, is used only
// when its coverage (see coverage.go: item count and key checksum) equals
// the one stored beside the codes (State.Stored); otherwise the load reads every code
// row, and the next write stores a new snapshot (TakeSnapshot).
const snapshotPart = 1 << 20

// snapshotMagic begins every part of sign bits of the current format
// (format 1 had no header; format 2 no generation; format 3 no middle
// parts; format 4 no checksum: all read as malformed, and the load that
// then reads every code writes a new snapshot).
const snapshotMagic = "mvcs5"

// Every part, of sign bits or of middle parts, ends with the CRC-32C
// (Castagnoli, little-endian) of the bytes before it: a bit flipped on
// disk in a code — which the coverage, of keys only, does not see —
// makes the part malformed, so the load reads every code row instead of
// ranking with a wrong code (an item then missed by its own vector). It
// guards against damage, not against a writer of the database: a tool
// that rewrites a part can write its checksum too (see coverage.go).
var partCRC = crc32.MakeTable(crc32.Castagnoli)

// sealPart appends p's checksum to p.
func sealPart(p []byte) []byte {
	return binary.LittleEndian.AppendUint32(p, crc32.Checksum(p, partCRC))
}

// openPart returns p without its checksum, and whether the checksum holds.
func openPart(p []byte) ([]byte, bool) {
	if len(p) < 4 {
		return nil, false
	}
	body := p[:len(p)-4]
	return body, crc32.Checksum(body, partCRC) == binary.LittleEndian.Uint32(p[len(p)-4:])
}

// The middle parts of the codes (see mid.go), when the index holds them,
// follow the parts of sign bits in parts of their own: a header of
// midMagic, the uvarint dimension count, the uvarint generation and the
// uvarint position of the part's first code among the snapshot's codes
// (in the order of the parts of sign bits), then per code a byte 1 and
// float32 Δ', |e'| and midBytes(d) levels, or a byte 0 for a code
// without middle part. A snapshot whose middle parts do not cover its
// codes, one after the other, is malformed.
const midMagic = "mvcm5"

// SnapshotMinCodes is the fewest codes worth a snapshot (reading fewer
// rows is quick); a variable so that tests can lower it.
var SnapshotMinCodes = 16384

// snapshotStale is how many items changed since the snapshot make a load
// store a new one.
const snapshotStale = 2048

// ErrSnapshot is the error of a malformed snapshot part.
var ErrSnapshot = errors.New("vecindex: malformed index snapshot")

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
			parts = append(parts, sealPart(cur))
			cur = nil
		}
	}
	if cur != nil {
		parts = append(parts, sealPart(cur))
	}
	if t.mid == nil {
		return parts
	}
	mb := midBytes(t.dims)
	at := 0 // position of the next code
	cur = nil
	for _, i := range order {
		s := &t.slots[i]
		if cur == nil {
			cur = binary.AppendUvarint(binary.AppendUvarint(binary.AppendUvarint([]byte(midMagic), uint64(t.dims)), uint64(gen)), uint64(at))
			cur = slices.Grow(cur, snapshotPart+(9+mb)*int(s.n))
		}
		for j := int(s.first); j < int(s.first+s.n); j++ {
			lv, mm, ok := t.midOf(j)
			if !ok {
				cur = append(cur, 0)
				continue
			}
			cur = append(cur, 1)
			cur = binary.LittleEndian.AppendUint32(cur, math.Float32bits(mm.delta))
			cur = binary.LittleEndian.AppendUint32(cur, math.Float32bits(mm.enorm))
			cur = append(cur, lv...)
		}
		at += int(s.n)
		if len(cur) >= snapshotPart {
			parts = append(parts, sealPart(cur))
			cur = nil
		}
	}
	if cur != nil {
		parts = append(parts, sealPart(cur))
	}
	return parts
}

// deserializeMid reads a part of middle parts of the snapshot of
// generation gen, whose parts of sign bits hold codes codes, into t: the
// index those parts were read into, or one that holds the middle parts
// alone (fillMid).
func (t *codeIndex) deserializeMid(p []byte, gen int64, codes int) error {
	p, ok := openPart(p)
	if !ok {
		return ErrSnapshot
	}
	rest, _ := bytes.CutPrefix(p, []byte(midMagic))
	var h [3]uint64
	for i := range h {
		v, k := binary.Uvarint(rest)
		if k <= 0 {
			return ErrSnapshot
		}
		h[i], rest = v, rest[k:]
	}
	mb := midBytes(t.dims)
	if h[0] != uint64(t.dims) || gen < 0 || h[1] != uint64(gen) {
		return ErrSnapshot
	}
	if t.midOff {
		return nil // over budget: the index keeps none
	}
	if h[2] != uint64(len(t.mids)) {
		return ErrSnapshot
	}
	if t.mid == nil {
		if len(t.mids) != 0 || codes == 0 {
			return ErrSnapshot
		}
		// Room for the codes the log and later writes add too: growing
		// the arena copies every middle part (80 ms of a first search at
		// 100 000 × 1 536 when the log since the snapshot added one code).
		room := codes + midSlack(codes)
		t.midRoom(room*mb, 0)
		t.mids = make([]midMeta, 0, room)
	}
	for len(rest) > 0 {
		if len(t.mids) == codes {
			return ErrSnapshot // more middle parts than codes
		}
		t.midRoom(mb, 0)
		switch rest[0] {
		case 0:
			at := len(t.mid)
			t.mid = slices.Grow(t.mid, mb)[:at+mb]
			clear(t.mid[at:])
			t.mids = append(t.mids, noMid)
			rest = rest[1:]
		case 1:
			if len(rest) < 9+mb {
				return ErrSnapshot
			}
			mm := midMeta{math.Float32frombits(binary.LittleEndian.Uint32(rest[1:])), math.Float32frombits(binary.LittleEndian.Uint32(rest[5:]))}
			for _, x := range []float32{mm.delta, mm.enorm} {
				if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) || x < 0 {
					return ErrSnapshot
				}
			}
			t.mid = append(t.mid, rest[9:9+mb]...)
			t.mids = append(t.mids, mm)
			rest = rest[9+mb:]
		default:
			return ErrSnapshot
		}
	}
	return nil
}

// midPartsFit reports whether n bytes can be the parts of middle parts of
// codes codes of dims dimensions: each code takes 1 or 9 + midBytes bytes,
// each part a header, and every part but the last at least snapshotPart
// bytes (see serialize).
func midPartsFit(n int64, codes, dims int) bool {
	header := int64(len(midMagic) + 3*binary.MaxVarintLen64 + 4) // and the checksum
	most := int64(codes)*int64(9+midBytes(dims)) + (n/snapshotPart+1)*header
	return n >= int64(codes) && n <= most
}

// midComplete reports whether t's middle parts, after a snapshot's, are
// none or one per code.
func (t *codeIndex) midComplete() bool {
	return t.mid == nil || len(t.mids) == len(t.meta)
}

// deserialize appends the items of a part of the snapshot of generation
// gen to t.
func (t *codeIndex) deserialize(p []byte, gen int64) error {
	if bytes.HasPrefix(p, []byte(midMagic)) {
		return t.deserializeMid(p, gen, len(t.meta))
	}
	p, ok := openPart(p)
	if !ok {
		return ErrSnapshot
	}
	rest, ok := bytes.CutPrefix(p, []byte(snapshotMagic))
	if !ok || t.mid != nil {
		// Parts of sign bits come before every part of middle parts.
		return ErrSnapshot
	}
	d, k := binary.Uvarint(rest)
	if k <= 0 || d != uint64(t.dims) {
		return ErrSnapshot
	}
	rest = rest[k:]
	g, k := binary.Uvarint(rest)
	if k <= 0 || gen < 0 || g != uint64(gen) {
		return ErrSnapshot
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
			return ErrSnapshot
		}
		upd, k := binary.Varint(p)
		if k <= 0 {
			return ErrSnapshot
		}
		p = p[k:]
		n, k := binary.Uvarint(p)
		if k <= 0 || n == 0 || n > uint64(len(p)-k)/uint64(size) {
			return ErrSnapshot
		}
		p = p[k:]
		id := t.internBytes(ns)
		if !t.appendSorted(key, codeSlot{updated: upd, ns: id, first: int32(len(t.meta)), n: int32(n)}) {
			return ErrSnapshot // out of order, or repeated
		}
		for range n {
			var (
				m  codeMeta
				ok bool
			)
			if t.bits, m, ok = decodeCode(t.bits, p[:size], t.dims); !ok {
				return ErrSnapshot
			}
			t.meta = append(t.meta, m)
			p = p[size:]
		}
	}
	return nil
}

// loadSnapshot loads the snapshot (generation snapGen) and the codes of the
// items logged since, up to generation q.Gen. It reports false, without
// error, when the snapshot cannot serve (malformed, the log asks for a
// full load, or the index they make does not cover the store): the caller
// then reads every code.
func (c *Cache) loadSnapshot(ctx context.Context, src Source, centre []float32, snapGen int64, q State) (bool, error) {
	gen := q.Gen
	t := newCodeIndex(c.dims, centre)
	// Size the index from the snapshot's bytes, at most the cache's
	// budget: each code takes at least its code bytes plus a few of key
	// and header; and at most the items with codes (an item has one code
	// a field), which the middle parts' bytes, if any, do not inflate.
	total, err := src.SnapshotSize(ctx)
	if err != nil {
		return false, err
	}
	perCode := int64(codeHeader + 8*t.words + 8)
	codes := min(total, c.budget) / perCode
	if q.Stored.Known && q.Stored.Cov.Items > 0 {
		codes = min(codes, q.Stored.Cov.Items)
	}
	var (
		refused = false // malformed, or over budget
		behind  = c.reader != nil && !c.syncMid.Load()
		midAt   = -1  // codes before the first part of middle parts, when left behind
		read    int64 // bytes of the parts read
	)
	err = src.SnapshotParts(ctx, func(p []byte) bool {
		if len(t.slots) == 0 {
			// Here, not before: the next part is being read meanwhile.
			t.reserve(int(codes))
		}
		if behind && bytes.HasPrefix(p, []byte(midMagic)) {
			// The rest is middle parts (five sixths of the bytes at 1 536
			// dimensions): read behind the search (fillMid).
			midAt = len(t.meta)
			// The bytes left must be those of middle parts of midAt
			// codes: a snapshot with more (a part of sign bits after
			// them) is malformed, found here rather than by the fill.
			refused = !midPartsFit(total-read, midAt, t.dims)
			return false
		}
		read += int64(len(p))
		refused = t.deserialize(p, snapGen) != nil || !t.fits(c.budget)
		return !refused
	})
	if err != nil || refused || !t.midComplete() {
		// The per-row load then reads every code (and marks the cache too
		// big if it is).
		return false, err
	}
	// The codes stay where the parts put them until the fill is in (the
	// log's removals below leave dead slots, not moved ones).
	t.filling = midAt > 0
	keys, full, err := src.Changed(ctx, snapGen, MaxLogRefresh)
	if err != nil || full {
		return false, err
	}
	got, err := c.readCodes(ctx, src, keys)
	if err != nil {
		return false, err
	}
	t.apply(keys, got)
	if !t.fits(c.budget) {
		return false, nil
	}
	if t.cov != q.Stored.Cov {
		// Rows of the snapshot or of the log are gone or were rewritten.
		c.Stats.Uncovered.Add(1)
		return false, nil
	}
	if len(keys) > snapshotStale {
		c.wantSnapshot.Store(true)
	}
	c.Stats.Snapshots.Add(1)
	if !t.filling {
		return c.install(t, gen, Coverage{}), nil
	}
	return c.installFilling(t, gen, snapGen, midAt), nil
}

// RewriteSnapshot decodes the snapshot parts of generation gen of an
// index of dims dimensions, removes the items remove, adds the items of
// add (each with one code, made by EncodeCode, updated at time 1) and
// returns the parts of the result: tests forge snapshots with it.
func RewriteSnapshot(parts [][]byte, dims int, gen int64, remove []Key, add map[Key][]byte) ([][]byte, error) {
	t := newCodeIndex(dims, nil)
	for _, p := range parts {
		if err := t.deserialize(p, gen); err != nil {
			return nil, err
		}
	}
	if !t.midComplete() {
		return nil, ErrSnapshot
	}
	for _, k := range remove {
		t.remove(k)
	}
	for k, b := range add {
		cd, ok := decodeFull(b, dims)
		if !ok {
			return nil, ErrSnapshot
		}
		t.add(k.NS, k.Key, 1, []code{cd})
	}
	t.compact()
	return t.serialize(gen), nil
}

// SnapshotKeys returns the items the snapshot parts of generation gen of
// an index of dims dimensions hold, in order: tests check with it that a
// snapshot holds no deleted item.
func SnapshotKeys(parts [][]byte, dims int, gen int64) ([]Key, error) {
	t := newCodeIndex(dims, nil)
	for _, p := range parts {
		if err := t.deserialize(p, gen); err != nil {
			return nil, err
		}
	}
	keys := make([]Key, 0, len(t.slots))
	for i := range t.slots {
		keys = append(keys, t.itemOf(&t.slots[i]))
	}
	return keys, nil
}

// FormatTag names the code and snapshot formats ("c3-mvcs3"): a file
// built for benchmarks carries it, so that a build whose formats changed
// builds a file of its own.
func FormatTag() string { return "c" + strconv.Itoa(codeFormatFine) + "-" + snapshotMagic }
