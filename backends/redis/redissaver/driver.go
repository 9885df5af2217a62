package redissaver

import (
	"bytes"
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"slices"
	"strconv"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/redis/go-redis/v9"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/checkpointer/engine"
)

// driver is checkpointer.Driver over Redis (doc.go has the layout and
// the transaction model).
type driver struct {
	rdb    redis.UniversalClient
	prefix string
	lease  time.Duration
	// onWait, when set (by tests), is called each time a write outside
	// Update finds its thread locked and waits.
	onWait func()
	// seen remembers the heads this driver wrote or read last, so that a
	// read can fetch the values in its first round (see loadRound).
	seen headCache
	// fc is the erasure fence's cache (fence.go).
	fc *fenceCache
	// stampBase and stampN make head stamps: a random base per driver and
	// a counter, unique without reading the system's random source at
	// every put (newStamp).
	stampBase string
	stampN    atomic.Uint64
	// inline: commands run in the caller's goroutine (Options.ReturnOnCancel
	// unset; see callCtx).
	inline bool
	// single: rdb is one server (a *redis.Client), where a put's script
	// also adds the thread to the thread index (putScript), atomically;
	// on a cluster the index lies in another slot and is kept beside the
	// script (indexAndRun, settleIndex).
	single bool
	// bigPut, bigWrites: a put whose values, or pending writes whose
	// records, hold more bytes go as a MULTI with plain writes (bigPut in
	// script.go; tests lower them).
	bigPut, bigWrites int
	// restoreOK: the server let this client RESTORE once (probeRestore).
	restoreOK atomic.Bool
	// hsetex: whether the server has HSETEX (Redis 8), asked once
	// (hasHSetEx): 0 not asked yet, 1 yes, 2 no.
	hsetex atomic.Int32
	// threadsK is threadsKey, made once (a put or pending writes on one
	// server names it).
	threadsK string
	// indexed are threads this driver added to the thread index (on a
	// cluster: their pending writes then skip adding them first).
	indexed threadSet
	// olderIndexed: the threads of older versions holding no checkpoint
	// are in the index (indexOlder ran, or found it done).
	olderIndexed atomic.Bool
}

var _ checkpointer.Driver = (*driver)(nil)

func (*driver) Name() string { return "redis" }

// Capabilities: not Serialized. An Update locks the threads it changes
// (DriverTx.Lock for removals), not the whole database.
func (*driver) Capabilities() checkpointer.DriverCapabilities {
	return checkpointer.DriverCapabilities{}
}

// threadsKey is the sorted set of thread ids holding (or having held)
// any key: a checkpoint, a value or pending writes. A thread is added by
// its first put or pending writes — on one server by their script, on a
// cluster (where the index is outside every thread's slot) before it —
// and removed after its deletion, under its lock; readers skip an entry
// whose thread holds nothing.
func (d *driver) threadsKey() string { return d.threadsK }

// callCtx is the context await runs a call with: with
// Options.ReturnOnCancel ctx, else ctx without its Done channel, so that
// await runs the call in the caller's goroutine (its deadline and values
// stay: go-redis ends a command at the deadline with
// ContextTimeoutEnabled).
func (d *driver) callCtx(ctx context.Context) context.Context {
	if !d.inline || ctx.Done() == nil {
		return ctx
	}
	return noDone{ctx}
}

// noDone is its parent without a Done channel: its deadline, values and
// Err stay (a wait for a thread's lock checks Err between its polls).
type noDone struct{ context.Context }

func (noDone) Done() <-chan struct{} { return nil }

// newStamp is a head stamp never made before, in any process: the
// driver's random base (128 bits) and its count of stamps.
func (d *driver) newStamp() string {
	return d.stampBase + strconv.FormatUint(d.stampN.Add(1), 36)
}

func newToken() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// ref names a checkpoint of a thread.
type ref struct{ ns, id string }

func (d *driver) Load(ctx context.Context, thread, ns, id string) (*checkpointer.StoredCheckpoint, error) {
	return await(d.callCtx(ctx), func(ctx context.Context) (*checkpointer.StoredCheckpoint, error) { return d.load(ctx, thread, ns, id) })
}

func (d *driver) load(ctx context.Context, thread, ns, id string) (*checkpointer.StoredCheckpoint, error) {
	k := d.keys(thread)
	if id == "" {
		m, err := d.rdb.ZRevRangeByLex(ctx, k.byNS, &redis.ZRangeBy{Max: "(" + ns + "\x01", Min: "[" + ns + sep, Count: 1}).Result()
		if err != nil {
			return nil, fmt.Errorf("load: %w", err)
		}
		if len(m) == 0 {
			return nil, nil
		}
		id = m[0][len(ns)+1:]
	}
	st, err := d.loadMany(ctx, thread, []ref{{ns, id}})
	if err != nil {
		return nil, err
	}
	return st[0], nil
}

// loaded is one checkpoint as the first round of loadRefs read it.
type loaded struct {
	cp, parent string
	hd         *head
	rec        [][]byte
	writes     map[string]string
	// oneRound: vals (nil for no fields) are the values of fields read
	// with the head in one MULTI, complete; no second round needed.
	oneRound bool
	vals     *redis.SliceCmd
	fields   []string
}

// tref names a checkpoint of any thread.
type tref struct {
	thread string
	ref
}

// loadMany reads the checkpoints refs of thread, nil for those not
// stored (see loadRefs).
func (d *driver) loadMany(ctx context.Context, thread string, refs []ref) ([]*checkpointer.StoredCheckpoint, error) {
	trs := make([]tref, len(refs))
	for i, r := range refs {
		trs[i] = tref{thread, r}
	}
	return d.loadRefs(ctx, trs)
}

// loadRefs reads the checkpoints refs, nil for those not stored, in two
// rounds of one MULTI each: the records and writes, then the values and
// (before format 4) the parent's sends, with the heads again. A
// checkpoint whose stamp changed between the rounds (written again, or
// removed) is read again: a removal deletes a checkpoint with the values
// only it referenced in one script, so a checkpoint the second round
// still sees unchanged has every value it references. The refs may name
// several threads only on one server (d.single): a cluster's MULTI is
// one slot's.
func (d *driver) loadRefs(ctx context.Context, refs []tref) ([]*checkpointer.StoredCheckpoint, error) {
	out := make([]*checkpointer.StoredCheckpoint, len(refs))
	todo := slices.Clone(refs)
	idx := make([]int, len(refs))
	for i := range idx {
		idx[i] = i
	}
	for attempt := 0; len(todo) > 0; attempt++ {
		if attempt == 20 {
			return nil, fmt.Errorf("load: %s changed under 20 reads in a row", checkpointer.NameID("thread", todo[0].thread))
		}
		var again []tref
		var againIdx []int
		sts, changed, err := d.loadRound(ctx, todo)
		if err != nil {
			return nil, err
		}
		for i, st := range sts {
			if changed[i] {
				again = append(again, todo[i])
				againIdx = append(againIdx, idx[i])
				continue
			}
			out[idx[i]] = st
		}
		todo, idx = again, againIdx
	}
	return out, nil
}

func (d *driver) loadRound(ctx context.Context, refs []tref) ([]*checkpointer.StoredCheckpoint, []bool, error) {
	type first struct {
		cp, par, hd *redis.StringCmd
		w           *redis.MapStringStringCmd
		// The values of the head seen last, read in the same MULTI:
		// when the head still holds that stamp, they are the
		// checkpoint's values and the second round is not needed.
		seen *seenHead
		vals *redis.SliceCmd
	}
	r1 := make([]first, len(refs))
	ks := make([]keys, len(refs))
	for i, r := range refs {
		if i > 0 && r.thread == refs[i-1].thread {
			ks[i] = ks[i-1]
		} else {
			ks[i] = d.keys(r.thread)
		}
	}
	_, err := d.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		for i, r := range refs {
			k := ks[i]
			f := nsID(r.ns, r.id)
			r1[i] = first{cp: p.HGet(ctx, k.cp, f), par: p.HGet(ctx, k.par, f), hd: p.HGet(ctx, k.hd, f), w: p.HGetAll(ctx, k.writes(r.ns, r.id))}
			if sh := d.seen.get(r.thread, f); sh != nil {
				r1[i].seen = sh
				if len(sh.fields) > 0 {
					r1[i].vals = p.HMGet(ctx, k.val, sh.fields...)
				}
			}
		}
		return nil
	})
	if err != nil && !errors.Is(err, redis.Nil) {
		return nil, nil, fmt.Errorf("load: %w", err)
	}
	ls := make([]*loaded, len(refs))
	for i := range refs {
		hb, err := r1[i].hd.Bytes()
		if errors.Is(err, redis.Nil) {
			continue
		}
		if err != nil {
			return nil, nil, fmt.Errorf("load: %w", err)
		}
		h, err := unpackHead(hb)
		if err != nil {
			return nil, nil, err
		}
		cb, err := r1[i].cp.Bytes()
		if err != nil {
			return nil, nil, fmt.Errorf("load: %s: %w", checkpointer.NameID("checkpoint", refs[i].id), err)
		}
		rec, err := unpack(cb, 3)
		if err != nil {
			return nil, nil, err
		}
		ls[i] = &loaded{cp: refs[i].id, parent: r1[i].par.Val(), hd: h, rec: rec, writes: r1[i].w.Val()}
		if sh := r1[i].seen; sh != nil && sh.stamp == h.stamp && h.v >= 4 {
			ls[i].oneRound, ls[i].vals, ls[i].fields = true, r1[i].vals, sh.fields
		}
	}
	type second struct {
		hd    *redis.StringCmd
		vals  *redis.SliceCmd
		sends *redis.MapStringStringCmd
		vf    []string
	}
	r2 := make([]second, len(refs))
	need := slices.ContainsFunc(ls, func(l *loaded) bool { return l != nil && !l.oneRound })
	if need {
		_, err = d.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
			for i, l := range ls {
				if l == nil || l.oneRound {
					continue
				}
				r, k := refs[i], ks[i]
				r2[i].hd = p.HGet(ctx, k.hd, nsID(r.ns, r.id))
				for ch, ver := range l.hd.versions {
					r2[i].vf = append(r2[i].vf, valField(r.ns, ch, ver))
				}
				if len(r2[i].vf) > 0 {
					r2[i].vals = p.HMGet(ctx, k.val, r2[i].vf...)
				}
				if l.hd.v < 4 && l.parent != "" {
					r2[i].sends = p.HGetAll(ctx, k.writes(r.ns, l.parent))
				}
			}
			return nil
		})
	}
	if err != nil && !errors.Is(err, redis.Nil) {
		return nil, nil, fmt.Errorf("load: %w", err)
	}
	out := make([]*checkpointer.StoredCheckpoint, len(refs))
	changed := make([]bool, len(refs))
	for i, l := range ls {
		if l == nil {
			continue
		}
		if l.oneRound {
			// Values read with the head: one round was enough.
			r2[i].vals, r2[i].vf = l.vals, l.fields
		} else {
			hb, err := r2[i].hd.Bytes()
			if errors.Is(err, redis.Nil) {
				continue // removed between the rounds: not stored
			}
			if err != nil {
				return nil, nil, fmt.Errorf("load: %w", err)
			}
			h, err := unpackHead(hb)
			if err != nil {
				return nil, nil, err
			}
			if h.stamp != l.hd.stamp {
				changed[i] = true
				continue
			}
			d.seen.put(refs[i].thread, refs[i].ref, h)
		}
		r := refs[i]
		st := &checkpointer.StoredCheckpoint{Thread: r.thread, NS: r.ns, ID: r.id, Parent: l.parent, Doc: l.rec[1], Meta: l.rec[2]}
		if r2[i].vals != nil {
			for j, v := range r2[i].vals.Val() {
				s, ok := v.(string)
				if !ok {
					continue // not stored
				}
				_, rest, _ := splitPair(r2[i].vf[j])
				ch, ver, _ := splitPair(rest)
				row, err := unpackValue(ch, ver, []byte(s))
				if err != nil {
					return nil, nil, err
				}
				st.Values = append(st.Values, row)
			}
		}
		if st.Writes, err = writeRows(l.writes); err != nil {
			return nil, nil, err
		}
		if r2[i].sends != nil {
			all, err := writeRows(r2[i].sends.Val())
			if err != nil {
				return nil, nil, err
			}
			st.Sends = []checkpointer.WriteRow{}
			for _, w := range all {
				if w.Channel == checkpointer.ChannelTasks {
					st.Sends = append(st.Sends, w)
				}
			}
			slices.SortFunc(st.Sends, func(a, b checkpointer.WriteRow) int {
				return cmp.Or(cmp.Compare(a.Path, b.Path), cmp.Compare(a.Task, b.Task), cmp.Compare(a.Idx, b.Idx))
			})
		}
		out[i] = st
	}
	return out, changed, nil
}

// packValue is a value record: type, data (nil kept apart from empty).
func packValue(v checkpointer.ValueRow) []byte {
	return appendValue(make([]byte, 0, valueLen(v)), v)
}

// valueLen is the length of v's record.
func valueLen(v checkpointer.ValueRow) int { return partLen(len(v.Type)) + partLen(len(v.Data)) }

// appendValue appends v's record (packValue) to b.
func appendValue(b []byte, v checkpointer.ValueRow) []byte {
	return appendPart(appendStrPart(b, v.Type), v.Data)
}

func unpackValue(ch, ver string, b []byte) (checkpointer.ValueRow, error) {
	p, err := unpack(b, 2)
	if err != nil {
		return checkpointer.ValueRow{}, err
	}
	return checkpointer.ValueRow{Channel: ch, Version: ver, Type: string(p[0]), Data: p[1]}, nil
}

// packWrite is a write record: path, channel, type, data.
func packWrite(path string, r checkpointer.WriteRow) []byte {
	return appendWrite(make([]byte, 0, writeLen(path, r)), path, r)
}

// writeLen is the length of r's record.
func writeLen(path string, r checkpointer.WriteRow) int {
	return partLen(len(path)) + partLen(len(r.Channel)) + partLen(len(r.Type)) + partLen(len(r.Data))
}

// appendWrite appends r's record (packWrite) to b; a nil Data is stored
// as empty.
func appendWrite(b []byte, path string, r checkpointer.WriteRow) []byte {
	data := r.Data
	if data == nil {
		data = []byte{}
	}
	return appendPart(appendStrPart(appendStrPart(appendStrPart(b, path), r.Channel), r.Type), data)
}

// writeRows are the write records of one checkpoint, in (task, idx)
// order.
func writeRows(m map[string]string) ([]checkpointer.WriteRow, error) {
	rows := make([]checkpointer.WriteRow, 0, len(m))
	for f, rec := range m {
		task, idxS, ok := splitPair(f)
		idx, err := strconv.Atoi(idxS)
		if !ok || err != nil {
			return nil, fmt.Errorf("%w: write field %q", ErrRecord, f)
		}
		p, err := unpack([]byte(rec), 4)
		if err != nil {
			return nil, err
		}
		rows = append(rows, checkpointer.WriteRow{Task: task, Path: string(p[0]), Idx: idx, Channel: string(p[1]), Type: string(p[2]), Data: p[3]})
	}
	slices.SortFunc(rows, func(a, b checkpointer.WriteRow) int {
		return cmp.Or(cmp.Compare(a.Task, b.Task), cmp.Compare(a.Idx, b.Idx))
	})
	return rows, nil
}

// scanItem is a checkpoint a Scan selected.
type scanItem struct{ thread, ns, id string }

func (d *driver) Scan(ctx context.Context, q checkpointer.DriverQuery) iter.Seq2[*checkpointer.StoredCheckpoint, error] {
	return func(yield func(*checkpointer.StoredCheckpoint, error) bool) {
		var threads []string
		if q.Thread != "" {
			threads = []string{q.Thread}
		} else {
			var err error
			threads, err = await(d.callCtx(ctx), func(ctx context.Context) ([]string, error) { return d.rdb.ZRange(ctx, d.threadsKey(), 0, -1).Result() })
			if err != nil {
				yield(nil, fmt.Errorf("list: %w", err))
				return
			}
		}
		// The ids a batch per thread at a time (members only, no
		// records), merged across threads; the records a page at a time.
		m, err := await(d.callCtx(ctx), func(ctx context.Context) (*scanMerge, error) { return d.newScanMerge(ctx, threads, q) })
		if err != nil {
			yield(nil, fmt.Errorf("list: %w", err))
			return
		}
		refs := make([]tref, 0, scanPage)
		for {
			// A page: up to scanPage checkpoints, read in one loadRefs —
			// of any threads on one server (a listing across threads
			// read one thread's run per round trip, one checkpoint each
			// when the threads' ids interleave), of one thread's run on
			// a cluster.
			refs = refs[:0]
			for len(refs) < scanPage {
				if m.mustRead() {
					if _, err := await(d.callCtx(ctx), func(ctx context.Context) (struct{}, error) { return struct{}{}, m.fill(ctx) }); err != nil {
						yield(nil, fmt.Errorf("list: %w", err))
						return
					}
				}
				it, ok := m.next()
				if !ok || (!d.single && len(refs) > 0 && it.thread != refs[0].thread) {
					break
				}
				m.pop()
				refs = append(refs, tref{it.thread, ref{it.ns, it.id}})
			}
			if len(refs) == 0 {
				return
			}
			sts, err := await(d.callCtx(ctx), func(ctx context.Context) ([]*checkpointer.StoredCheckpoint, error) {
				return d.loadRefs(ctx, refs)
			})
			if err != nil {
				yield(nil, err)
				return
			}
			for _, st := range sts {
				if st != nil && !yield(st, nil) {
					return
				}
			}
		}
	}
}

// scanPage caps the checkpoints one loadRefs of a Scan reads.
const scanPage = 64

// scanThreadsPage caps the threads whose first batches one pipeline of
// a Scan reads.
const scanThreadsPage = 256

// scanRange is the sorted set of thread that q reads (its namespace's
// ids, or all its ids) and the range, newest first: only what the limit
// takes (a page of a long thread reads that page, not the thread).
func (d *driver) scanRange(thread string, q checkpointer.DriverQuery) (string, *redis.ZRangeBy) {
	k := d.keys(thread)
	if q.NS != nil {
		ns := *q.NS
		by := &redis.ZRangeBy{Min: "[" + ns + sep, Max: "(" + ns + "\x01", Count: int64(q.Limit)}
		if q.ID != "" {
			by.Min, by.Max = "["+nsID(ns, q.ID), "["+nsID(ns, q.ID)
		} else if q.Before != "" {
			by.Max = "(" + nsID(ns, q.Before)
		}
		return k.byNS, by
	}
	by := &redis.ZRangeBy{Min: "-", Max: "+", Count: int64(q.Limit)}
	if q.ID != "" {
		by.Min, by.Max = "["+q.ID+sep, "("+q.ID+"\x01"
	} else if q.Before != "" {
		by.Max = "(" + q.Before
	}
	return k.byID, by
}

// scanMembers are the checkpoints of thread named by the members ms of
// the set scanRange read.
func scanMembers(thread string, q checkpointer.DriverQuery, ms []string) []scanItem {
	out := make([]scanItem, 0, len(ms))
	for _, m := range ms {
		var ns, id string
		if q.NS != nil {
			_, id, _ = splitPair(m)
			ns = *q.NS
		} else {
			id, ns, _ = splitPair(m)
		}
		if q.Before == "" || id < q.Before {
			out = append(out, scanItem{thread, ns, id})
		}
	}
	return out
}

func (d *driver) Threads(ctx context.Context, after string, limit int) ([]string, error) {
	return await(d.callCtx(ctx), func(ctx context.Context) ([]string, error) { return d.threads(ctx, after, limit) })
}

func (d *driver) threads(ctx context.Context, after string, limit int) ([]string, error) {
	return d.indexPage(ctx, after, limit, d.live)
}

// indexPage returns the threads of the thread index after after,
// ascending, at most limit, that count holds above 0 (one call a page of
// the index): an entry a removal left names a thread holding nothing.
func (d *driver) indexPage(ctx context.Context, after string, limit int, count func(context.Context, []string) ([]int64, error)) ([]string, error) {
	var out []string
	lo := "-"
	if after != "" {
		lo = "(" + after
	}
	for len(out) < limit {
		page, err := d.rdb.ZRangeByLex(ctx, d.threadsKey(), &redis.ZRangeBy{Min: lo, Max: "+", Count: int64(max(limit, 64))}).Result()
		if err != nil {
			return nil, fmt.Errorf("threads: %w", err)
		}
		if len(page) == 0 {
			break
		}
		n, err := count(ctx, page)
		if err != nil {
			return nil, err
		}
		for i, th := range page {
			if n[i] > 0 && len(out) < limit {
				out = append(out, th)
			}
		}
		lo = "(" + page[len(page)-1]
	}
	return out, nil
}

// live counts the checkpoints of each thread (0: an index entry left by
// a removal).
func (d *driver) live(ctx context.Context, threads []string) ([]int64, error) {
	cmds := make([]*redis.IntCmd, len(threads))
	_, err := d.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, th := range threads {
			cmds[i] = p.ZCard(ctx, d.keys(th).byID)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("threads: %w", err)
	}
	out := make([]int64, len(threads))
	for i, c := range cmds {
		out[i] = c.Val()
	}
	return out, nil
}

func (d *driver) ThreadInfos(ctx context.Context) iter.Seq2[checkpointer.ThreadInfo, error] {
	return func(yield func(checkpointer.ThreadInfo, error) bool) {
		infos, err := await(d.callCtx(ctx), d.threadInfos)
		if err != nil {
			yield(checkpointer.ThreadInfo{}, err)
			return
		}
		for _, ti := range infos {
			if !yield(ti, nil) {
				return
			}
		}
	}
}

// threadInfos are ThreadInfos' rows, in order.
func (d *driver) threadInfos(ctx context.Context) ([]checkpointer.ThreadInfo, error) {
	threads, err := d.rdb.ZRange(ctx, d.threadsKey(), 0, -1).Result()
	if err != nil {
		return nil, fmt.Errorf("threads: %w", err)
	}
	var infos []checkpointer.ThreadInfo
	for page := range slices.Chunk(threads, 256) {
		type q struct {
			n    *redis.IntCmd
			last *redis.StringSliceCmd
		}
		qs := make([]q, len(page))
		_, err := d.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
			for i, th := range page {
				k := d.keys(th)
				qs[i] = q{p.ZCard(ctx, k.byID), p.ZRevRangeByLex(ctx, k.byID, &redis.ZRangeBy{Min: "-", Max: "+", Count: 1})}
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("threads: %w", err)
		}
		for i, th := range page {
			if qs[i].n.Val() == 0 || len(qs[i].last.Val()) == 0 {
				continue
			}
			id, _, _ := splitPair(qs[i].last.Val()[0])
			infos = append(infos, checkpointer.ThreadInfo{ThreadID: th, Checkpoints: int(qs[i].n.Val()), LatestCheckpointID: id})
		}
	}
	slices.SortFunc(infos, func(a, b checkpointer.ThreadInfo) int {
		return cmp.Or(cmp.Compare(b.LatestCheckpointID, a.LatestCheckpointID), cmp.Compare(a.ThreadID, b.ThreadID))
	})
	return infos, nil
}

// runID is metadata's run_id when it is a JSON string (as json.Unmarshal
// into a struct with a run_id field reads it: the last key matching
// run_id in any case; "" for anything else or invalid JSON).
func runID(meta []byte) string {
	if s, ok := scanRunID(meta); ok {
		return s
	}
	var m struct {
		RunID any `json:"run_id"`
	}
	if json.Unmarshal(meta, &m) != nil {
		return ""
	}
	s, _ := m.RunID.(string)
	return s
}

// scanRunID is runID without reflection, for the metadata the engine
// writes (a compact object whose keys and run id need no unescaping): a
// put's metadata went through json.Unmarshal only for this, a tenth of a
// put's client CPU. ok is false when it cannot tell (an escaped key, a
// run id escaped or not UTF-8), and runID decodes.
func scanRunID(b []byte) (string, bool) {
	if !json.Valid(b) {
		return "", true
	}
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return "", true // not an object: no field to read
	}
	i++
	val := ""
	for {
		i = skipSpace(b, i)
		if b[i] == '}' {
			return val, true
		}
		if b[i] == ',' {
			i = skipSpace(b, i+1)
		}
		end := skipString(b, i)
		key := b[i+1 : end-1]
		if bytes.IndexByte(key, '\\') >= 0 {
			return "", false
		}
		i = skipSpace(b, end)
		i = skipSpace(b, i+1) // the colon
		vend := skipValue(b, i)
		if bytes.EqualFold(key, []byte("run_id")) {
			val = ""
			if b[i] == '"' {
				raw := b[i+1 : vend-1]
				if bytes.IndexByte(raw, '\\') >= 0 || !utf8.Valid(raw) {
					return "", false
				}
				val = string(raw)
			}
		}
		i = vend
	}
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipString is the index past the string starting at b[i] (valid JSON).
func skipString(b []byte, i int) int {
	for i++; b[i] != '"'; i++ {
		if b[i] == '\\' {
			i++
		}
	}
	return i + 1
}

// skipValue is the index past the value starting at b[i] (valid JSON).
func skipValue(b []byte, i int) int {
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for {
			switch b[i] {
			case '"':
				i = skipString(b, i)
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
			i++
		}
	}
	for i < len(b) && b[i] != ',' && b[i] != '}' && b[i] != ']' && b[i] != ' ' && b[i] != '\t' && b[i] != '\n' && b[i] != '\r' {
		i++
	}
	return i
}

// versionsOf are p's channel versions: p.Versions, else the document's.
func versionsOf(p *checkpointer.PutRows) (map[string]string, int, error) {
	if p.Versions != nil && p.V != 0 {
		return p.Versions, p.V, nil
	}
	doc, err := engine.DecodeDocument(p.Doc)
	if err != nil {
		return nil, 0, fmt.Errorf("%w: %s: %w", ErrRecord, checkpointer.NameID("checkpoint", p.ID), err)
	}
	return doc.ChannelVersions(), doc.V(), nil
}

// indexAndRun adds thread to the thread index, then runs b. On a cluster
// the index lives in a slot of its own, on another node, so the two are
// separate commands, and the index goes first: a put whose index entry the
// server refuses (its node out of memory) then stores nothing and fails —
// sent together, the put was stored and reported failed, and its thread,
// missing from the index, was never listed nor swept by retention
// (TestIndexRefusedStoresNothing). An entry whose put then fails is
// harmless: listings skip threads that hold no checkpoint (live).
func (d *driver) indexAndRun(ctx context.Context, token, thread string, b *batch) (string, error) {
	if err := d.rdb.ZAdd(ctx, d.threadsKey(), redis.Z{Member: thread}).Err(); err != nil {
		return "", err
	}
	d.indexed.add(thread)
	return d.run(ctx, token, b)
}

// putBatch is the script of a put (putScript), and the head it writes.
func (d *driver) putBatch(p *checkpointer.PutRows) (*batch, *head, error) {
	versions, v, err := versionsOf(p)
	if err != nil {
		return nil, nil, err
	}
	k := d.keys(p.Thread)
	// Room for the thread index too: appending it grew the slice.
	b := &batch{script: putScript, tk: k, keys: make([]string, 7, 8)}
	b.keys[0], b.keys[1], b.keys[2], b.keys[3], b.keys[4], b.keys[5], b.keys[6] = k.lock, k.cp, k.par, k.hd, k.byNS, k.byID, k.val
	guard := ""
	if p.NeedsParent && p.Parent != "" && p.Parent != p.ID {
		guard = nsID(p.NS, p.Parent)
	}
	h := head{v: v, runID: runID(p.Meta), stamp: d.newStamp(), versions: versions}
	index := ""
	if d.single {
		// The script adds the thread to the index itself (putScript).
		b.keys = append(b.keys, d.threadsKey())
		index = p.Thread
	}
	size := 0
	for _, val := range p.Values {
		size += len(val.Data)
	}
	big := size > d.bigPut
	// The arguments' bytes — the checkpoint's field, record, head and
	// id·ns member, and each value's field and record — are written into
	// one buffer, each a substring of it, and handed to go-redis as
	// *string (which it writes as the string): boxing a pointer
	// allocates nothing, where each string or []byte boxed, and each
	// part built apart, cost an allocation (a put's were a fifth of its
	// client allocations).
	var a argBuf
	nv := len(p.Values)
	if big {
		nv = 0 // the values go as plain writes (below)
	}
	var num [20]byte
	n := 2*(len(p.NS)+1+len(p.ID)) + partLen(len(p.Type)) + partLen(len(p.Doc)) + partLen(len(p.Meta)) + h.packLen(num[:0])
	for _, val := range p.Values[:nv] {
		n += len(p.NS) + len(val.Channel) + len(val.Version) + 2 + valueLen(val)
	}
	a.grow(n, 7+2*nv)
	a.add(guard)
	a.buf = appendNsID(a.buf, p.NS, p.ID)
	a.end()
	a.buf = appendPart(appendPart(appendStrPart(a.buf, p.Type), p.Doc), p.Meta)
	a.end()
	a.add(p.Parent)
	a.buf = h.appendPack(a.buf, num[:0])
	a.end()
	a.buf = appendNsID(a.buf, p.ID, p.NS)
	a.end()
	a.add(index)
	for _, val := range p.Values[:nv] {
		// HSETNX: a stored (channel, version) keeps its first value.
		a.buf = appendValField(a.buf, p.NS, val.Channel, val.Version)
		a.end()
		a.buf = appendValue(a.buf, val)
		a.end()
	}
	b.args = a.args(2)
	if big {
		// The values go as plain HSETNX after putCheckLua (see bigPut).
		b.script, b.check, b.poison = nil, putCheckLua, k.val
		b.writes = make([]write, 0, len(p.Values))
		for _, val := range p.Values {
			b.writes = append(b.writes, write{nx: true, field: valField(p.NS, val.Channel, val.Version), value: packValue(val)})
		}
		return b, &h, nil
	}
	if d.hsetex.Load() == 1 && keepFirstOne(len(p.Values), func(i, j int) bool { return p.Values[i].Channel == p.Values[j].Channel }) {
		b.script = putScriptFNX
	}
	return b, &h, nil
}

// keepFirstOne reports whether n fields kept first (HSETNX's rule) can go
// in one HSETEX FNX (keepFirstLua): two or more, at most maxArgs/2, no
// two the same (same(i, j)).
func keepFirstOne(n int, same func(i, j int) bool) bool {
	if n < 2 || n > maxArgs/2 {
		return false
	}
	for i := 1; i < n; i++ {
		for j := range i {
			if same(i, j) {
				return false
			}
		}
	}
	return true
}

// hasHSetEx asks the server, once per driver, whether it has HSETEX
// (Redis 8), which keepFirstLua uses; only when a write may use it
// (want). An error makes the answer no, but for a context that ended
// (asked again at the next write). A cluster node that has none (in an
// upgrade) costs its scripts a failed call, never a wrong write
// (keepFirstLua).
func (d *driver) hasHSetEx(ctx context.Context, want bool) {
	if !want || d.hsetex.Load() != 0 {
		return
	}
	v, err := d.rdb.Do(ctx, "COMMAND", "INFO", "HSETEX").Slice()
	if err != nil && ctx.Err() != nil {
		return
	}
	if err == nil && len(v) == 1 && v[0] != nil {
		d.hsetex.Store(1)
	} else {
		d.hsetex.Store(2)
	}
}

// writesBatch is the script of a PutWrites (writesScript).
func (d *driver) writesBatch(w *checkpointer.WriteRows) *batch {
	k := d.keys(w.Thread)
	b := &batch{script: writesScript, tk: k, keys: []string{k.lock, k.wk, k.writes(w.NS, w.Checkpoint), "", ""}}
	index := ""
	if d.single {
		// The script adds the thread to the index itself.
		b.keys, index = append(b.keys[:3], d.threadsKey()), w.Thread
	} else {
		// The script tells whether the thread held nothing (writesIndexLua).
		b.keys[3], b.keys[4] = k.byID, k.val
	}
	upsert := 0 // an int: boxing 0 or 1 allocates nothing
	if w.Upsert {
		upsert = 1
	}
	size := 0
	for _, r := range w.Rows {
		size += len(r.Data)
	}
	big := size > d.bigWrites
	// The arguments are substrings of one buffer, passed as *string (see
	// putBatch).
	var a argBuf
	nr := len(w.Rows)
	if big {
		nr = 0 // the writes go as plain commands (below)
	}
	n := len(w.NS) + 1 + len(w.Checkpoint)
	for _, r := range w.Rows[:nr] {
		n += len(w.Task) + 21 + writeLen(w.Path, r)
	}
	a.grow(n, 3+2*nr)
	a.buf = appendNsID(a.buf, w.NS, w.Checkpoint)
	a.end()
	a.add(index)
	a.add("0")
	for _, r := range w.Rows[:nr] {
		a.buf = appendWriteField(a.buf, w.Task, r.Idx)
		a.end()
		a.buf = appendWrite(a.buf, w.Path, r)
		a.end()
	}
	b.args = a.args(3)
	b.args[2] = upsert
	if big {
		// The writes go as plain commands after writesCheckLua (see
		// bigPut).
		b.script, b.check, b.poison = nil, writesCheckLua, b.keys[2]
		if w.Upsert {
			fv := make([]any, 0, 2*len(w.Rows))
			for _, r := range w.Rows {
				fv = append(fv, writeField(w.Task, r.Idx), packWrite(w.Path, r))
			}
			b.writes = []write{{fv: fv}}
			return b
		}
		b.writes = make([]write, 0, len(w.Rows))
		for _, r := range w.Rows {
			b.writes = append(b.writes, write{nx: true, field: writeField(w.Task, r.Idx), value: packWrite(w.Path, r)})
		}
		return b
	}
	if !w.Upsert && d.hsetex.Load() == 1 && keepFirstOne(len(w.Rows), func(i, j int) bool { return w.Rows[i].Idx == w.Rows[j].Idx }) {
		b.script = writesScriptFNX
	}
	return b
}

// put runs a put's script with token ("" outside Update), fenced by fs
// (see fence.go).
func (d *driver) put(ctx context.Context, token string, p *checkpointer.PutRows, fs *fences) error {
	d.hasHSetEx(ctx, len(p.Values) >= 2)
	b, h, err := d.putBatch(p)
	if err != nil {
		return err
	}
	k := b.tk
	if d.single {
		return d.putSingle(ctx, token, p, b, h, k, fs)
	}
	var r string
	// trust: this driver indexed the thread before, so the script runs
	// without adding it first, and refuses (UNINDEXED) when the thread
	// holds nothing — a deletion since may have taken its entry out —,
	// after which it is indexed first: a put is one round trip, not two
	// (putRecordLua).
	trust := d.indexed.has(p.Thread)
	added := false
	for {
		if err := d.fenceBatch(ctx, b, k, fs); err != nil {
			if added {
				_ = d.settleIndex(ctx, p.Thread, k)
			}
			return err
		}
		var err error
		if trust {
			b.args[8] = "\x00"
			r, err = d.run(ctx, token, b)
		} else {
			// Indexed first: a crash after the script leaves no thread
			// out of the index (an extra entry is skipped by readers),
			// and a refused index entry stores nothing (indexAndRun).
			b.args[8] = ""
			added = true
			r, err = d.indexAndRun(ctx, token, p.Thread, b)
		}
		if err == nil && r == replyLocked {
			r, err = d.runDirect(ctx, b)
		}
		if err != nil {
			_ = d.settleIndex(context.WithoutCancel(ctx), p.Thread, k)
			return fmt.Errorf("put: %w", err)
		}
		if d.refused(r, k) {
			continue
		}
		if r == replyUnindexed {
			d.indexed.forget(p.Thread)
			trust = false
			continue
		}
		break
	}
	if r == replyMissing {
		_ = d.settleIndex(ctx, p.Thread, k)
		return p.ErrParentMissing()
	}
	if err := replyErr(p.Thread, r); err != nil {
		_ = d.settleIndex(ctx, p.Thread, k)
		return err
	}
	d.seen.put(p.Thread, ref{p.NS, p.ID}, h)
	if r == replyNew {
		// A deletion of the thread may have taken the entry out since
		// the pipeline's ZADD, or may take the thread since the script.
		err := d.rdb.ZAdd(ctx, d.threadsKey(), redis.Z{Member: p.Thread}).Err()
		if err == nil {
			err = d.settleIndex(ctx, p.Thread, k)
		}
		if err != nil {
			return fmt.Errorf("put: %w", err)
		}
	}
	return nil
}

// putSingle is put on one server: the script adds the thread to the
// index with its writes, atomically, so a put is one command and a
// refused or failed put leaves the index as it was (a deletion removes
// the entry while it holds the thread's lock, which the script checks).
func (d *driver) putSingle(ctx context.Context, token string, p *checkpointer.PutRows, b *batch, h *head, k keys, fs *fences) error {
	var r string
	for {
		if err := d.fenceBatch(ctx, b, k, fs); err != nil {
			return err
		}
		var err error
		if token == "" {
			r, err = d.runDirect(ctx, b)
		} else {
			r, err = d.run(ctx, token, b)
		}
		if err != nil {
			return fmt.Errorf("put: %w", err)
		}
		if !d.refused(r, k) {
			break
		}
	}
	if r == replyMissing {
		return p.ErrParentMissing()
	}
	if err := replyErr(p.Thread, r); err != nil {
		return err
	}
	d.seen.put(p.Thread, ref{p.NS, p.ID}, h)
	return nil
}

// settleIndex leaves thread in the thread index exactly when it holds
// any key — a checkpoint, a value or pending writes —, after a put or
// pending writes added it (first, or again after a NEW reply) and a
// deletion or a refusal may have left the entry naming nothing — a thread
// of an erased subject included. Another write making the thread new
// meanwhile adds it after its script, and the second check here keeps it
// when that script ran before.
func (d *driver) settleIndex(ctx context.Context, thread string, k keys) error {
	fixed := k.fixed()
	if n, err := d.rdb.Exists(ctx, fixed...).Result(); err != nil || n > 0 {
		return err
	}
	if err := d.rdb.ZRem(ctx, d.threadsKey(), thread).Err(); err != nil {
		return err
	}
	if n, err := d.rdb.Exists(ctx, fixed...).Result(); err != nil || n == 0 {
		return err
	}
	return d.rdb.ZAdd(ctx, d.threadsKey(), redis.Z{Member: thread}).Err()
}

// fenceBatch makes b check the fence token of k's slot, when fs holds
// a fence, after checking fs's keys (again when needed).
func (d *driver) fenceBatch(ctx context.Context, b *batch, k keys, fs *fences) error {
	if fs == nil {
		return nil
	}
	slot := d.fc.slot(k)
	v, ok, err := fs.value(ctx, slot)
	if err != nil || !ok {
		return err
	}
	b.fence(d.fc.key(slot), v)
	return nil
}

// refused reports whether r is the fence's refusal, recording the value
// it found: the script changed nothing and is run again.
func (d *driver) refused(r string, k keys) bool {
	v, ok := fenceReply(r)
	if ok {
		d.fc.saw(d.fc.slot(k), v)
	}
	return ok
}

// putWrites runs a task's pending writes' script with token ("" outside
// Update), fenced by fs. The thread becomes findable by RowThreads even
// when it holds no checkpoint: on one server the script indexes it; on a
// cluster the index lives in another slot, so the thread is indexed first
// (a refused index entry stores nothing, as a put's:
// TestIndexRefusedStoresNothing) unless this driver indexed it before
// (d.indexed), in which case the script refuses (UNINDEXED) when the
// thread holds nothing — a deletion since may have taken its entry out —
// and the thread is indexed and the script run again.
func (d *driver) putWrites(ctx context.Context, token string, w *checkpointer.WriteRows, fs *fences) error {
	if len(w.Rows) == 0 {
		return nil
	}
	d.hasHSetEx(ctx, !w.Upsert && len(w.Rows) >= 2)
	b := d.writesBatch(w)
	k := b.tk
	if !d.single {
		return d.putWritesCluster(ctx, token, w, b, k, fs)
	}
	for {
		r, err := d.runWrites(ctx, token, b, k, fs)
		if err != nil {
			return err
		}
		if !d.refused(r, k) {
			return replyErr(w.Thread, r)
		}
	}
}

// runWrites runs a pending writes' batch once, fenced by fs.
func (d *driver) runWrites(ctx context.Context, token string, b *batch, k keys, fs *fences) (string, error) {
	if err := d.fenceBatch(ctx, b, k, fs); err != nil {
		return "", err
	}
	var r string
	var err error
	if token == "" {
		r, err = d.runDirect(ctx, b)
	} else {
		r, err = d.run(ctx, token, b)
	}
	if err != nil {
		return "", fmt.Errorf("put writes: %w", err)
	}
	return r, nil
}

// putWritesCluster is putWrites on a cluster, where the thread index is
// in another slot than the thread (see putWrites).
func (d *driver) putWritesCluster(ctx context.Context, token string, w *checkpointer.WriteRows, b *batch, k keys, fs *fences) error {
	indexed := false // this call added the thread to the index
	index := func() error {
		if err := d.rdb.ZAdd(ctx, d.threadsKey(), redis.Z{Member: w.Thread}).Err(); err != nil {
			return fmt.Errorf("put writes: %w", err)
		}
		d.indexed.add(w.Thread)
		indexed = true
		b.args[5] = "0"
		return nil
	}
	if d.indexed.has(w.Thread) {
		b.args[5] = "1"
	} else if err := index(); err != nil {
		return err
	}
	for {
		r, err := d.runWrites(ctx, token, b, k, fs)
		if err == nil && d.refused(r, k) {
			continue
		}
		if err == nil && r == replyUnindexed {
			d.indexed.forget(w.Thread)
			if err := index(); err != nil {
				return err
			}
			continue
		}
		if err == nil && r == replyNew {
			// A deletion of the thread may have taken the entry out
			// since it was added, or may take the thread since the
			// script (settleIndex).
			err := d.rdb.ZAdd(ctx, d.threadsKey(), redis.Z{Member: w.Thread}).Err()
			if err == nil {
				err = d.settleIndex(ctx, w.Thread, k)
			}
			if err != nil {
				return fmt.Errorf("put writes: %w", err)
			}
			return nil
		}
		if err == nil {
			err = replyErr(w.Thread, r)
		}
		if err != nil && indexed {
			// The entry this call added may name a thread holding
			// nothing (an erased subject's).
			_ = d.settleIndex(context.WithoutCancel(ctx), w.Thread, k)
		}
		return err
	}
}

func (d *driver) Put(ctx context.Context, p *checkpointer.PutRows) error {
	_, err := await(d.callCtx(ctx), func(ctx context.Context) (struct{}, error) {
		return struct{}{}, d.put(ctx, "", p, d.newFences(p.Fence))
	})
	return err
}

func (d *driver) PutWrites(ctx context.Context, w *checkpointer.WriteRows) error {
	_, err := await(d.callCtx(ctx), func(ctx context.Context) (struct{}, error) {
		return struct{}{}, d.putWrites(ctx, "", w, d.newFences(w.Fence))
	})
	return err
}

// newFences are the fences of one write outside Update: nil when f needs
// no check.
func (d *driver) newFences(f checkpointer.WriteFence) *fences {
	if !fenced(f) {
		return nil
	}
	fs := &fences{c: d.fc}
	fs.add(f)
	return fs
}

func (d *driver) Heads(ctx context.Context, sel checkpointer.HeadSelector) ([]checkpointer.Head, error) {
	return await(d.callCtx(ctx), func(ctx context.Context) ([]checkpointer.Head, error) { return d.heads(ctx, sel) })
}

func (d *driver) DeleteThreads(ctx context.Context, threads []string) error {
	return d.Update(ctx, func(t checkpointer.DriverTx) error {
		_, err := t.DeleteThreads(ctx, threads, false)
		return err
	})
}
