package redisstore

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/memvault/memvault/store"
	"github.com/memvault/memvault/store/engine"
	"github.com/memvault/memvault/store/vecindex"
)

// The code index's data (package vecindex, driven by the engine) lives
// under the store's hash tag beside the items:
//
//   - each item hash holds its vectors' codes: q, the sign part of each
//     code (vecindex.SplitCode), f, their fine parts, and h, the item's
//     coverage hash (vecindex.ItemHash) as "hi:lo" 32-bit halves;
//   - {P}:ix, a hash: gen (the generation), cgen (the generation the
//     codes are complete for), floor (the log's), full (the last
//     generation that changed every item), sgen and ssize (the
//     snapshot's generation, -1: none, and bytes), centre (the codes'
//     centre, float32s), items/shi/slo/known (the coverage of the items
//     with codes);
//   - {P}:ixl, a sorted set: each changed row id scored by the last
//     generation that changed it;
//   - {P}:ixs, a list: the snapshot's parts.
//
// The codes of an item are written by the same commit script as the
// item, and so are the log, the generation and the coverage: an item and
// its codes never disagree, and a server out of memory refuses the whole
// commit (the script checks everything before its first write). The
// coverage's 64-bit wrapping sum is kept by the script in two 32-bit
// halves (Lua numbers are doubles). Reads are separate scripts, as the
// rest of a read-only transaction's: the state first, then codes, so that
// codes are at least as new as the state, and a change the codes show
// early is logged under a later generation and read again (the index
// never misses one; it may read one twice).

// maxLogItems bounds the items one commit logs: one that changes more
// logs that every item changed. The log keeps the last 512 generations
// (the commit script trims it every 64): a process further behind reloads
// every code.
const maxLogItems = 1024

// floatBudget is engine.Options.FloatBytes: a store whose vectors fit
// scores them from an exact in-process copy.
const floatBudget int64 = 32 << 20

// ixState is the index's state as read.
type ixState struct {
	gen, cgen, floor, sgen, full int64
	centre                       []float32
	cov                          vecindex.StoredCoverage
	snapGone                     bool
}

// readStateScript returns the index state: {"new"} for a store without
// one and without rows, {"legacy"} for one with rows written before the
// index (codes to be made: SyncCodes), else the fields and whether the
// snapshot list exists. KEYS[1] is {P}:ix; ARGV = base.
var readStateScript = redis.NewScript(`
if redis.call('EXISTS', KEYS[1]) == 0 then
  if redis.call('ZCARD', ARGV[1] .. 'k') == 0 then return {'new'} end
  return {'legacy'}
end
local f = redis.call('HMGET', KEYS[1], 'gen', 'cgen', 'floor', 'sgen', 'full', 'centre', 'items', 'shi', 'slo', 'known')
for i = 1, 10 do if not f[i] then f[i] = '' end end
f[11] = tostring(redis.call('EXISTS', ARGV[1] .. 'ixs'))
return f
`)

// readState reads the index's state. A store without one is at
// generation 0, its (no) codes complete and counted; one whose rows an
// older build wrote is at generation 1 with no codes (0) and no coverage,
// which the engine's SyncCodes then makes.
func (d *driver) readState(ctx context.Context) (ixState, error) {
	res, err := readStateScript.Run(ctx, d.rdb, []string{d.k.ix}, d.k.base).StringSlice()
	if err != nil {
		return ixState{}, fmt.Errorf("redis: reading the index state: %w", err)
	}
	switch {
	case len(res) == 1 && res[0] == "new":
		return ixState{sgen: -1, cov: vecindex.StoredCoverage{Known: true}}, nil
	case len(res) == 1 && res[0] == "legacy":
		return ixState{gen: 1, sgen: -1}, nil
	case len(res) != 11:
		return ixState{}, fmt.Errorf("%w: index state of %d fields", ErrRecord, len(res))
	}
	num := func(i int) int64 {
		n, e := strconv.ParseInt(res[i], 10, 64)
		if e != nil && err == nil {
			err = fmt.Errorf("%w: index state field %d %q", ErrRecord, i, res[i])
		}
		return n
	}
	st := ixState{gen: num(0), cgen: num(1), floor: num(2), sgen: num(3), full: num(4)}
	st.centre, _ = decodeFloats(res[5])
	items, hi, lo := num(6), num(7), num(8)
	st.cov = vecindex.StoredCoverage{Cov: vecindex.Coverage{Items: items, Sum: uint64(hi)<<32 | uint64(lo)}, Known: res[9] == "1"}
	st.snapGone = st.sgen >= 0 && res[10] == "0"
	return st, err
}

// encodeFloats is a centre as stored: float32s, little-endian.
func encodeFloats(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, f := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(f))
	}
	return b
}

func decodeFloats(s string) ([]float32, bool) {
	if len(s) == 0 || len(s)%4 != 0 {
		return nil, false
	}
	v := make([]float32, len(s)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32([]byte(s[4*i : 4*i+4])))
	}
	return v, true
}

// hashArg is an item's coverage hash as the commit script keeps it.
func hashArg(k store.RowKey) string {
	h := vecindex.ItemHash(k)
	return strconv.FormatUint(h>>32, 10) + ":" + strconv.FormatUint(h&0xffffffff, 10)
}

// appendCodes appends to q and f the sign part and fine part of each of
// vs's codes, each length-prefixed (uint32, little-endian); a vector
// without a code adds an empty entry to both, so that entries line up.
func appendCodes(q, f []byte, vs []store.Vector) ([]byte, []byte) {
	for _, v := range vs {
		c, fine := vecindex.SplitCode(v.Code)
		q = binary.LittleEndian.AppendUint32(q, uint32(len(c)))
		q = append(q, c...)
		f = binary.LittleEndian.AppendUint32(f, uint32(len(fine)))
		f = append(f, fine...)
	}
	return q, f
}

// eachEntry calls fn with each length-prefixed entry of b; it reports
// false for a malformed b (fn may have been called for a prefix of it).
func eachEntry(b string, fn func(e string)) bool {
	for len(b) > 0 {
		if len(b) < 4 {
			return false
		}
		n := binary.LittleEndian.Uint32([]byte(b[:4]))
		b = b[4:]
		if uint64(n) > uint64(len(b)) {
			return false
		}
		fn(b[:n])
		b = b[n:]
	}
	return true
}

// idxWrite is a write transaction's bookkeeping of the code index.
type idxWrite struct {
	prev   ixState
	read   bool  // prev was read
	gen    int64 // Bump's (0: not bumped)
	keys   []store.RowKey
	full   bool
	recode *recode
	commit []func()
}

// recode is a Recode the engine asked for, run at Commit after the
// transaction's changes.
type recode struct {
	centre []float32
	code   func([]float32) []byte
}

// ixState returns the index state this transaction reads: a write
// transaction's as it read it under the lock, a read-only one's as its
// first read of it found it (so that every index read of one search
// names one state).
func (t *tx) ixState(ctx context.Context) (ixState, error) {
	if t.write {
		w, err := t.idx(ctx)
		if err != nil {
			return ixState{}, err
		}
		return w.prev, nil
	}
	if t.st == nil {
		st, err := t.d.readState(ctx)
		if err != nil {
			return st, err
		}
		t.st = &st
	}
	return *t.st, nil
}

// idx returns the write transaction's bookkeeping, reading the state at
// the first need (under the lock, so it is the last commit's).
func (t *tx) idx(ctx context.Context) (*idxWrite, error) {
	if err := t.mustWrite(); err != nil {
		return nil, err
	}
	if t.iw != nil && t.iw.read {
		return t.iw, nil
	}
	st, err := t.d.readState(ctx)
	if err != nil {
		return nil, err
	}
	if t.iw == nil {
		t.iw = &idxWrite{}
	}
	t.iw.prev, t.iw.read = st, true
	return t.iw, nil
}

// IndexState implements engine.IndexTx.
func (t *tx) IndexState(ctx context.Context) (vecindex.State, error) {
	st, err := t.ixState(ctx)
	if err != nil {
		return vecindex.State{}, err
	}
	return vecindex.State{Gen: st.gen, CodesGen: st.cgen, LogFloor: st.floor, Stored: st.cov, SnapshotGone: st.snapGone}, nil
}

// Quant implements vecindex.Source.
func (t *tx) Quant(ctx context.Context) ([]float32, int64, error) {
	st, err := t.ixState(ctx)
	return st.centre, st.sgen, err
}

// changedScript returns the row ids logged after generation ARGV[2]
// (at most ARGV[3] + 1 of them), or {"full"} when a commit since changed
// every item. KEYS[1] is {P}:ix; ARGV[1] the base.
var changedScript = redis.NewScript(`
local full = tonumber(redis.call('HGET', KEYS[1], 'full') or '0')
if full > tonumber(ARGV[2]) then return {'full'} end
local ids = redis.call('ZRANGEBYSCORE', ARGV[1] .. 'ixl', '(' .. ARGV[2], '+inf', 'LIMIT', 0, tonumber(ARGV[3]) + 1)
table.insert(ids, 1, 'ids')
return ids
`)

// Changed implements vecindex.Source.
func (t *tx) Changed(ctx context.Context, since int64, limit int) ([]store.RowKey, bool, error) {
	res, err := changedScript.Run(ctx, t.d.rdb, []string{t.d.k.ix}, t.d.k.base, since, limit).StringSlice()
	if err != nil {
		return nil, false, fmt.Errorf("redis: reading the index log: %w", err)
	}
	if len(res) == 0 || res[0] == "full" || len(res)-1 > limit {
		return nil, true, nil
	}
	keys := make([]store.RowKey, 0, len(res)-1)
	for _, id := range res[1:] {
		k, ok := splitID(id)
		if !ok {
			return nil, false, fmt.Errorf("%w: logged row id %q", ErrRecord, id)
		}
		keys = append(keys, k)
	}
	return keys, false, nil
}

// codesScript reads the codes of rows: ARGV = base, with fine parts ("1"
// or "0"), then row ids; one list {u, q[, f]} per id.
var codesScript = redis.NewScript(`
local base = ARGV[1]
local out = {}
for i = 3, #ARGV do
  if ARGV[2] == '1' then
    out[#out+1] = redis.call('HMGET', base .. 'r:' .. ARGV[i], 'u', 'q', 'f')
  else
    out[#out+1] = redis.call('HMGET', base .. 'r:' .. ARGV[i], 'u', 'q')
  end
end
return out
`)

// Codes implements vecindex.Source: each code joined with its fine part.
func (t *tx) Codes(ctx context.Context, keys []store.RowKey, fn func(store.RowKey, int64, []byte)) error {
	var buf []byte
	for start := 0; start < len(keys); start += 500 {
		chunk := keys[start:min(len(keys), start+500)]
		argv := make([]any, 0, 2+len(chunk))
		argv = append(argv, t.d.k.base, "1")
		for _, k := range chunk {
			argv = append(argv, rowID(k))
		}
		res, err := codesScript.Run(ctx, t.d.rdb, []string{t.d.k.ix}, argv...).Slice()
		if err != nil {
			return fmt.Errorf("redis: reading codes: %w", err)
		}
		for i, r := range res {
			f, _ := r.([]any)
			if len(f) != 3 || f[1] == nil {
				continue
			}
			u, err := strconv.ParseInt(str(f[0]), 10, 64)
			if err != nil {
				return fmt.Errorf("%w: row %q: updated %q", ErrRecord, chunk[i].Key, str(f[0]))
			}
			var codes, fines []string
			ok := eachEntry(str(f[1]), func(e string) { codes = append(codes, e) }) &&
				eachEntry(str(f[2]), func(e string) { fines = append(fines, e) }) && len(fines) == len(codes)
			if !ok {
				return fmt.Errorf("%w: row %q/%q: codes", ErrRecord, chunk[i].NS, chunk[i].Key)
			}
			for j, c := range codes {
				if c == "" {
					continue
				}
				buf = vecindex.JoinCode(buf[:0], []byte(c), []byte(fines[j]))
				fn(chunk[i], u, buf)
			}
		}
	}
	return nil
}

func str(v any) string { s, _ := v.(string); return s }

// allCodesScript returns the next ARGV[3] row ids after ARGV[2] (a
// ZRANGEBYLEX bound) with their updated times and codes (sign parts):
// a flat list id, u, q, … (rows without codes are skipped) ending with
// the last id read ("" when none is left).
var allCodesScript = redis.NewScript(`
local base = ARGV[1]
local ids = redis.call('ZRANGEBYLEX', base .. 'k', ARGV[2], '+', 'LIMIT', 0, tonumber(ARGV[3]))
local out = {}
for _, id in ipairs(ids) do
  local f = redis.call('HMGET', base .. 'r:' .. id, 'u', 'q')
  if f[1] and f[2] then
    out[#out+1] = id
    out[#out+1] = f[1]
    out[#out+1] = f[2]
  end
end
out[#out+1] = ids[#ids] or ''
return out
`)

// allCodesChunk is how many rows one read of AllCodes covers.
const allCodesChunk = 2000

// AllCodes implements vecindex.Source: rows in id order, which is
// (namespace, key) byte order (an id is the namespace, a NUL, the key).
func (t *tx) AllCodes(ctx context.Context, fn func(ns, key []byte, updated int64, code []byte) bool) error {
	from := "-"
	for {
		res, err := allCodesScript.Run(ctx, t.d.rdb, []string{t.d.k.lex}, t.d.k.base, from, allCodesChunk).StringSlice()
		if err != nil {
			return fmt.Errorf("redis: reading codes: %w", err)
		}
		if len(res) == 0 || len(res)%3 != 1 {
			return fmt.Errorf("%w: codes reply of %d entries", ErrRecord, len(res))
		}
		for i := 0; i+2 < len(res); i += 3 {
			k, ok := splitID(res[i])
			u, err := strconv.ParseInt(res[i+1], 10, 64)
			if !ok || err != nil {
				return fmt.Errorf("%w: row %q", ErrRecord, res[i])
			}
			ns, key := []byte(k.NS), []byte(k.Key)
			more := true
			if !eachEntry(res[i+2], func(c string) {
				if more && c != "" {
					more = fn(ns, key, u, []byte(c))
				}
			}) {
				return fmt.Errorf("%w: row %q/%q: codes", ErrRecord, k.NS, k.Key)
			}
			if !more {
				return nil
			}
		}
		last := res[len(res)-1]
		if last == "" {
			return nil
		}
		from = "(" + last
	}
}

// SnapshotSize implements vecindex.Source: the size the script stored
// with the snapshot, but never more than the memory its list really
// takes — the index reserves room by it, and a stored number alone (a
// damaged or hostile ssize) made a 300-item store's first search
// allocate 547 MiB.
func (t *tx) SnapshotSize(ctx context.Context) (int64, error) {
	n, err := t.d.rdb.HGet(ctx, t.d.k.ix, "ssize").Int64()
	if err == redis.Nil {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("redis: reading the snapshot size: %w", err)
	}
	// SAMPLES 0: every element counted, not an estimate from a few.
	used, err := t.d.rdb.MemoryUsage(ctx, t.d.k.snap, 0).Result()
	if err == redis.Nil {
		return 0, nil // no snapshot list
	}
	if err != nil {
		return 0, fmt.Errorf("redis: reading the snapshot's memory: %w", err)
	}
	return max(0, min(n, used)), nil
}

// SnapshotParts implements vecindex.Source: a part per round trip.
func (t *tx) SnapshotParts(ctx context.Context, use func([]byte) bool) error {
	for i := int64(0); ; i++ {
		p, err := t.d.rdb.LIndex(ctx, t.d.k.snap, i).Bytes()
		if err == redis.Nil {
			return nil
		}
		if err != nil {
			return fmt.Errorf("redis: reading the snapshot: %w", err)
		}
		if !use(p) {
			return nil
		}
	}
}

// VectorsOf implements engine.IndexTx.
func (t *tx) VectorsOf(ctx context.Context, keys []store.RowKey, fn func(store.RowKey, time.Time, []store.Vector) error) error {
	for start := 0; start < len(keys); start += 200 {
		chunk := keys[start:min(len(keys), start+200)]
		ids := make([]string, len(chunk))
		for i, k := range chunk {
			ids[i] = rowID(k)
		}
		rs, vs, err := t.rows(ctx, ids, true)
		if err != nil {
			return err
		}
		for i, r := range rs {
			if len(vs[i]) == 0 {
				continue
			}
			if err := fn(r.RowKey, r.Updated, vs[i]); err != nil {
				return err
			}
		}
	}
	return nil
}

// eachID calls fn with every committed row id, in order, a chunk at a
// time.
func (d *driver) eachID(ctx context.Context, chunk int64, fn func(ids []string) error) error {
	from := "-"
	for {
		ids, err := d.rdb.ZRangeByLex(ctx, d.k.lex, &redis.ZRangeBy{Min: from, Max: "+", Count: chunk}).Result()
		if err != nil {
			return fmt.Errorf("redis: listing rows: %w", err)
		}
		if len(ids) == 0 {
			return nil
		}
		if err := fn(ids); err != nil {
			return err
		}
		if int64(len(ids)) < chunk {
			return nil
		}
		from = "(" + ids[len(ids)-1]
	}
}

// AllVectors implements engine.FloatSource.
func (t *tx) AllVectors(ctx context.Context, fn func(store.RowKey, time.Time, []store.Vector) error) error {
	return t.d.eachID(ctx, 200, func(ids []string) error {
		rs, vs, err := t.rows(ctx, ids, true)
		if err != nil {
			return err
		}
		for i, r := range rs {
			if len(vs[i]) > 0 {
				if err := fn(r.RowKey, r.Updated, vs[i]); err != nil {
					return err
				}
			}
		}
		return nil
	})
}

// StorageBytes implements engine.FloatSource: estimated from the row
// count (a row's vectors are about 4·dims bytes).
func (t *tx) StorageBytes(ctx context.Context) (int64, error) {
	n, err := t.d.rdb.ZCard(ctx, t.d.k.lex).Result()
	if err != nil {
		return 0, fmt.Errorf("redis: counting rows: %w", err)
	}
	return n * int64(4*t.d.dims+96), nil
}

// Bump implements engine.IndexTx: the generation, log and coverage are
// written by the commit script.
func (t *tx) Bump(ctx context.Context, changed []store.RowKey, full bool) (int64, error) {
	w, err := t.idx(ctx)
	if err != nil {
		return 0, err
	}
	if w.gen == 0 {
		w.gen = w.prev.gen + 1
	}
	w.keys = append(w.keys, changed...)
	w.full = w.full || full
	return w.gen, nil
}

// OnCommit implements engine.IndexTx.
func (t *tx) OnCommit(fn func()) {
	if t.iw == nil {
		t.iw = &idxWrite{}
	}
	t.iw.commit = append(t.iw.commit, fn)
}

// putSnapshotScript replaces the snapshot when the lock holds the token
// and the generation and the codes' are still ARGV[3]: KEYS[1] the lock;
// ARGV = base, token, gen, size, parts.
var putSnapshotScript = redis.NewScript(`
local base = ARGV[1]
if redis.call('GET', KEYS[1]) ~= ARGV[2] then
  return redis.error_reply('LEASELOST the store lock is no longer held by this transaction')
end
local st = redis.call('HMGET', base .. 'ix', 'gen', 'cgen')
if st[1] ~= ARGV[3] or st[2] ~= ARGV[3] then return 0 end
redis.call('DEL', base .. 'ixs')
for i = 5, #ARGV do redis.call('RPUSH', base .. 'ixs', ARGV[i]) end
redis.call('HSET', base .. 'ix', 'sgen', ARGV[3], 'ssize', ARGV[4])
return 1
`)

// PutSnapshot implements engine.IndexWriter.
func (t *tx) PutSnapshot(ctx context.Context, gen int64, parts [][]byte) (bool, error) {
	if err := t.mustWrite(); err != nil {
		return false, err
	}
	var size int64
	argv := []any{t.d.k.base, t.token, gen, 0}
	for _, p := range parts {
		size += int64(len(p))
		argv = append(argv, p)
	}
	argv[3] = size
	n, err := putSnapshotScript.Run(ctx, t.d.rdb, []string{t.d.k.lock}, argv...).Int()
	if err != nil {
		return false, t.leaseErr("storing the index snapshot", err)
	}
	return n == 1, nil
}

// leaseErr wraps err of one of the transaction's scripts.
func (t *tx) leaseErr(what string, err error) error {
	if strings.HasPrefix(err.Error(), "LEASELOST") {
		return fmt.Errorf("redis: %s: %w (%v)", what, ErrLeaseLost, t.d.lease)
	}
	return fmt.Errorf("redis: %s: %w", what, err)
}

// putCoverageScript stores the coverage (ARGV items, hi, lo) when the lock
// holds the token and, unless ARGV[3] is "", the generation and the
// codes' are still ARGV[3]. KEYS[1] the lock; ARGV = base, token, gen,
// items, hi, lo.
var putCoverageScript = redis.NewScript(`
local base = ARGV[1]
if redis.call('GET', KEYS[1]) ~= ARGV[2] then
  return redis.error_reply('LEASELOST the store lock is no longer held by this transaction')
end
local st = redis.call('HMGET', base .. 'ix', 'gen', 'cgen')
if ARGV[3] ~= '' and (st[1] ~= ARGV[3] or st[2] ~= ARGV[3]) then return 0 end
if not st[1] then
  redis.call('HSET', base .. 'ix', 'gen', '0', 'cgen', '0', 'floor', '0', 'full', '0', 'sgen', '-1')
end
redis.call('HSET', base .. 'ix', 'items', ARGV[4], 'shi', ARGV[5], 'slo', ARGV[6], 'known', '1')
return 1
`)

func (t *tx) putCoverage(ctx context.Context, gen string, cov vecindex.Coverage) (bool, error) {
	if err := t.mustWrite(); err != nil {
		return false, err
	}
	n, err := putCoverageScript.Run(ctx, t.d.rdb, []string{t.d.k.lock}, t.d.k.base, t.token, gen,
		cov.Items, cov.Sum>>32, cov.Sum&0xffffffff).Int()
	if err != nil {
		return false, t.leaseErr("storing the codes' coverage", err)
	}
	return n == 1, nil
}

// PutCoverage implements engine.IndexWriter.
func (t *tx) PutCoverage(ctx context.Context, gen int64, cov vecindex.Coverage) (bool, error) {
	return t.putCoverage(ctx, strconv.FormatInt(gen, 10), cov)
}

// CountCoverage implements engine.IndexWriter.
func (t *tx) CountCoverage(ctx context.Context) error {
	if err := t.mustWrite(); err != nil {
		return err
	}
	var c vecindex.Coverage
	err := t.d.eachCoded(ctx, func(k store.RowKey) { c.Add(vecindex.ItemHash(k)) })
	if err != nil {
		return err
	}
	_, err = t.putCoverage(ctx, "", c)
	return err
}

// eachCoded calls fn with every committed row that has codes.
func (d *driver) eachCoded(ctx context.Context, fn func(store.RowKey)) error {
	from := "-"
	for {
		res, err := allCodesScript.Run(ctx, d.rdb, []string{d.k.lex}, d.k.base, from, allCodesChunk).StringSlice()
		if err != nil {
			return fmt.Errorf("redis: reading codes: %w", err)
		}
		if len(res) == 0 || len(res)%3 != 1 {
			return fmt.Errorf("%w: codes reply of %d entries", ErrRecord, len(res))
		}
		for i := 0; i+2 < len(res); i += 3 {
			if k, ok := splitID(res[i]); ok {
				fn(k)
			}
		}
		last := res[len(res)-1]
		if last == "" {
			return nil
		}
		from = "(" + last
	}
}

// CodedItems implements engine.IndexWriter: the coverage as read, plus
// the transaction's puts with codes (an upper bound: a replaced item
// counts twice), which is what the engine needs of it — whether to
// centre the codes.
func (t *tx) CodedItems(ctx context.Context) (int64, error) {
	w, err := t.idx(ctx)
	if err != nil {
		return 0, err
	}
	return w.prev.cov.Cov.Items + int64(t.coded), nil
}

// SampleVectors implements engine.IndexWriter: the vectors of the first
// rows in id order.
func (t *tx) SampleVectors(ctx context.Context, limit int, fn func([]float32)) error {
	n := 0
	errEnough := fmt.Errorf("enough")
	err := t.d.eachID(ctx, 200, func(ids []string) error {
		rs, vs, err := t.rows(ctx, ids, true)
		if err != nil {
			return err
		}
		for i := range rs {
			for _, v := range vs[i] {
				if n >= limit {
					return errEnough
				}
				fn(v.Vec)
				n++
			}
		}
		return nil
	})
	if err == errEnough {
		err = nil
	}
	return err
}

// Recode implements engine.IndexWriter: run at Commit, after the
// transaction's changes (see runRecode).
func (t *tx) Recode(ctx context.Context, gen int64, centre []float32, code func([]float32) []byte) error {
	w, err := t.idx(ctx)
	if err != nil {
		return err
	}
	w.recode = &recode{centre: centre, code: code}
	return nil
}

// recodeScript rewrites the codes of rows when the lock holds the token
// (and renews its lease): KEYS[1] the lock; ARGV = base, token, lease
// (ms), then id, q, f, h per row (q "": no codes).
var recodeScript = redis.NewScript(`
local base = ARGV[1]
if redis.call('GET', KEYS[1]) ~= ARGV[2] then
  return redis.error_reply('LEASELOST the store lock is no longer held by this transaction')
end
redis.call('PEXPIRE', KEYS[1], ARGV[3])
for i = 4, #ARGV, 4 do
  local hk = base .. 'r:' .. ARGV[i]
  if redis.call('EXISTS', hk) == 1 then
    if ARGV[i+1] == '' then
      redis.call('HDEL', hk, 'q', 'f', 'h')
    else
      redis.call('HSET', hk, 'q', ARGV[i+1], 'f', ARGV[i+2], 'h', ARGV[i+3])
    end
  end
end
return 1
`)

// recodeDoneScript ends a recode: the centre, the codes complete for
// generation ARGV[3], their coverage, every item logged as changed, no
// snapshot; then it releases the lock. KEYS[1] the lock; ARGV = base,
// token, gen, centre, items, hi, lo.
var recodeDoneScript = redis.NewScript(`
local base = ARGV[1]
if redis.call('GET', KEYS[1]) ~= ARGV[2] then
  return redis.error_reply('LEASELOST the store lock is no longer held by this transaction')
end
redis.call('DEL', base .. 'ixs')
redis.call('HSET', base .. 'ix', 'centre', ARGV[4], 'cgen', ARGV[3], 'full', ARGV[3], 'sgen', '-1', 'ssize', '0',
  'items', ARGV[5], 'shi', ARGV[6], 'slo', ARGV[7], 'known', '1')
redis.call('DEL', KEYS[1])
return 1
`)

// runRecode rewrites every code with r.code, holding the lock the commit
// script kept, 200 rows a script, then stores the centre and coverage and
// releases the lock. Searches meanwhile see the codes behind the
// generation (the commit script did not advance cgen) and rank exactly.
func (t *tx) runRecode(ctx context.Context, r *recode, gen int64) error {
	var cov vecindex.Coverage
	err := t.d.eachID(ctx, 200, func(ids []string) error {
		rows, vs, err := t.committedRows(ctx, ids, true)
		if err != nil {
			return err
		}
		argv := []any{t.d.k.base, t.token, t.d.lease.Milliseconds()}
		for _, id := range ids {
			if _, ok := rows[id]; !ok {
				continue
			}
			k, _ := splitID(id)
			vecs := vs[id]
			for i := range vecs {
				vecs[i].Code = r.code(vecs[i].Vec)
			}
			if len(vecs) == 0 {
				argv = append(argv, id, "", "", "")
				continue
			}
			q, f := appendCodes(nil, nil, vecs)
			cov.Add(vecindex.ItemHash(k))
			argv = append(argv, id, q, f, hashArg(k))
		}
		if len(argv) == 3 {
			return nil
		}
		if err := recodeScript.Run(ctx, t.d.rdb, []string{t.d.k.lock}, argv...).Err(); err != nil {
			return t.leaseErr("recoding", err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	var centre []byte
	if r.centre != nil {
		centre = encodeFloats(r.centre)
	}
	if err := recodeDoneScript.Run(ctx, t.d.rdb, []string{t.d.k.lock}, t.d.k.base, t.token, gen, centre,
		cov.Items, cov.Sum>>32, cov.Sum&0xffffffff).Err(); err != nil {
		return t.leaseErr("recoding", err)
	}
	return nil
}

var (
	_ engine.IndexTx     = (*tx)(nil)
	_ engine.IndexWriter = (*tx)(nil)
	_ engine.FloatSource = (*tx)(nil)
)
