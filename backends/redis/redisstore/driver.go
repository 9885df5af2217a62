package redisstore

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/memvault/memvault/store"
)

// driver is the store.Driver over one Redis server or cluster.
type driver struct {
	rdb   redis.UniversalClient
	k     keys
	lease time.Duration
	// vsets: vectors of dims dimensions go to the vector set too (Redis 8,
	// Options.NoVectorSets unset); the engine then asks Nearest.
	vsets bool
	dims  int
	// codes: the store has an index, so the driver keeps the engine's
	// code index data (index.go; store.DriverCaps.CodeIndex).
	codes bool
	// sem serializes this process's write transactions, so that they
	// queue here instead of polling the server's lock.
	sem chan struct{}
}

func (d *driver) Name() string { return "redis" }

// Caps: write transactions are isolated by the store's lock on the server
// (several processes may share a store); ANN when vector sets serve the
// store's distance; a code index (the engine's, index.go) with an index.
func (d *driver) Caps() store.DriverCaps {
	return store.DriverCaps{Transactions: true, ANN: d.vsets, CodeIndex: d.codes}
}

func (d *driver) Close() error { return nil }

// Begin starts a transaction. A write transaction takes the store's lock
// (a lease holding its token) and keeps its changes in memory; its reads
// see the committed rows with its changes applied, and Commit sends all
// changes in one script that checks the token first. A read-only
// transaction takes nothing: each of its reads is one atomic script.
func (d *driver) Begin(ctx context.Context, write bool) (store.DriverTx, error) {
	t := &tx{d: d}
	if !write {
		return t, nil
	}
	select {
	case d.sem <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	var b [16]byte
	_, _ = rand.Read(b[:])
	t.token = hex.EncodeToString(b[:])
	wait := time.Millisecond
	for {
		ok, err := d.rdb.SetNX(ctx, d.k.lock, t.token, d.lease).Result()
		if err != nil {
			<-d.sem
			return nil, fmt.Errorf("redis: taking the store lock: %w", err)
		}
		if ok {
			break
		}
		select {
		case <-time.After(wait):
		case <-ctx.Done():
			<-d.sem
			return nil, ctx.Err()
		}
		wait = min(2*wait, 50*time.Millisecond)
	}
	t.write, t.ctx = true, ctx
	t.state = map[string]*pending{}
	t.stop, t.renewed = make(chan struct{}), make(chan struct{})
	go t.renew()
	return t, nil
}

// renew extends the transaction's lease every lease/3 until it ends (or
// its context does), so that a long transaction — a batch embedding
// hundreds of vectors on a loaded machine — keeps the lock. Only a lock
// still holding the token is extended: a lease that ran out anyway (the
// process stalled longer than the lease) stays lost, and Commit fails
// with ErrLeaseLost.
func (t *tx) renew() {
	defer close(t.renewed)
	tick := time.NewTicker(t.d.lease / 3)
	defer tick.Stop()
	for {
		select {
		case <-t.stop:
			return
		case <-t.ctx.Done():
			return
		case <-tick.C:
		}
		ok, err := renewScript.Run(t.ctx, t.d.rdb, []string{t.d.k.lock}, t.token, t.d.lease.Milliseconds()).Int()
		if err == nil && ok == 0 {
			return // lost: Commit reports it
		}
	}
}

// ErrLeaseLost is wrapped by the error of a Commit whose transaction held
// the store's lock longer than Options.Lease and lost it: nothing of the
// transaction was written.
var ErrLeaseLost = errors.New("redis: the store lock's lease ran out before commit")

// pending is what a write transaction did to one row so far.
type pending struct {
	deleted bool
	row     store.Row // when !deleted
	// vecs are the row's vectors when known (vecsSet); otherwise the
	// committed row's apply.
	vecs    []store.Vector
	vecsSet bool
	// refreshed: only the expiry changed (row holds the new one); the
	// rest is the committed row's.
	refreshed bool
}

type tx struct {
	d     *driver
	write bool
	done  bool
	ctx   context.Context
	token string
	// stop ends the lease's renewal; renewed is closed when it has.
	stop, renewed chan struct{}
	args          []any // the changes, as commitScript's ARGV after base and token
	state         map[string]*pending
	// cleared are prefixes deleted by the transaction: committed rows
	// under them are gone unless state says otherwise.
	cleared []store.Namespace
	// touched are the rows the transaction put or deleted, in order
	// (repeats possible); coded counts its puts with codes.
	touched []store.RowKey
	coded   int
	// iw is a write transaction's code index bookkeeping (index.go); st
	// a read-only one's index state, read once.
	iw *idxWrite
	st *ixState
}

func (t *tx) release() {
	if t.write && !t.done {
		t.done = true
		<-t.d.sem
	}
}

// stopRenewal ends the lease renewal before the commit or rollback: the
// lease left covers them.
func (t *tx) stopRenewal() {
	if t.stop != nil {
		close(t.stop)
		<-t.renewed
		t.stop = nil
	}
}

func (t *tx) Commit() error {
	if !t.write || t.done {
		return nil
	}
	defer t.release()
	t.stopRenewal()
	ctx := context.WithoutCancel(t.ctx)
	ix, err := t.indexArgs(ctx)
	if err != nil {
		_ = unlockScript.Run(ctx, t.d.rdb, []string{t.d.k.lock}, t.token).Err()
		return fmt.Errorf("redis: commit: %w", err)
	}
	argv := make([]any, 0, 2+len(ix)+len(t.args))
	argv = append(append(append(argv, t.d.k.base, t.token), ix...), t.args...)
	err = commitScript.Run(ctx, t.d.rdb, []string{t.d.k.lock}, argv...).Err()
	if err != nil {
		if strings.HasPrefix(err.Error(), "LEASELOST") {
			return fmt.Errorf("%w (%v)", ErrLeaseLost, t.d.lease)
		}
		_ = unlockScript.Run(ctx, t.d.rdb, []string{t.d.k.lock}, t.token).Err()
		return fmt.Errorf("redis: commit: %w", err)
	}
	if t.iw == nil {
		return nil
	}
	if t.iw.recode != nil && t.iw.gen != 0 {
		// The changes are committed (and the lock kept): a failed recode
		// leaves the codes behind the generation, so searches rank
		// exactly until the next open recodes (engine.SyncCodes); the
		// commit itself succeeded.
		if err := t.runRecode(ctx, t.iw.recode, t.iw.gen); err != nil {
			_ = unlockScript.Run(ctx, t.d.rdb, []string{t.d.k.lock}, t.token).Err()
		}
	}
	for _, fn := range t.iw.commit {
		fn()
	}
	return nil
}

// indexArgs returns the commit script's index arguments (see
// commitScript): "" when the transaction changes no row; "L" when a
// store without index changes rows (the codes of an index kept by
// another configuration fall behind); else "I", the new generation,
// full, recode and the logged row ids. Changes the engine did not log (a
// put without vectors) are logged all the same, for other processes'
// indexes.
func (t *tx) indexArgs(ctx context.Context) ([]any, error) {
	changes := len(t.touched) > 0 || len(t.cleared) > 0
	if !t.d.codes {
		if changes {
			return []any{"L"}, nil
		}
		return []any{""}, nil
	}
	if t.iw == nil || t.iw.gen == 0 {
		if !changes {
			return []any{""}, nil
		}
		if _, err := t.Bump(ctx, t.touched, len(t.cleared) > 0); err != nil {
			return nil, err
		}
	}
	w := t.iw
	if len(t.cleared) > 0 {
		w.full = true
	}
	ids := make([]any, 0, len(w.keys))
	if !w.full && len(w.keys) <= maxLogItems {
		seen := make(map[store.RowKey]bool, len(w.keys))
		for _, k := range w.keys {
			if !seen[k] {
				seen[k] = true
				ids = append(ids, rowID(k))
			}
		}
	}
	full, re := "0", "0"
	if w.full || len(w.keys) > maxLogItems {
		full = "1"
	}
	if w.recode != nil {
		re = "1"
	}
	return append([]any{"I", w.gen, full, re, len(ids)}, ids...), nil
}

func (t *tx) Rollback() error {
	if !t.write || t.done {
		return nil
	}
	defer t.release()
	t.stopRenewal()
	return unlockScript.Run(context.WithoutCancel(t.ctx), t.d.rdb, []string{t.d.k.lock}, t.token).Err()
}

// hidden reports whether a committed row at id is gone in this
// transaction (deleted under a cleared prefix, with no later state).
func (t *tx) hidden(k store.RowKey) bool {
	for _, p := range t.cleared {
		if under(k.NS, p) {
			return true
		}
	}
	return false
}

// at returns what this transaction did to id (nil: nothing), and whether
// a committed row there is hidden.
func (t *tx) at(id string, k store.RowKey) (*pending, bool) {
	if !t.write {
		return nil, false
	}
	if p := t.state[id]; p != nil {
		return p, true
	}
	return nil, t.hidden(k)
}

var rowFields = []any{"v", "c", "u", "e", "t"}

// committedRows reads the rows at ids as committed, with their vectors
// when vecs; a missing row is absent from the map.
func (t *tx) committedRows(ctx context.Context, ids []string, vecs bool) (map[string]store.Row, map[string][]store.Vector, error) {
	rows := make(map[string]store.Row, len(ids))
	var vs map[string][]store.Vector
	if vecs {
		vs = make(map[string][]store.Vector)
	}
	fields := rowFields
	if vecs {
		fields = append(slices.Clone(rowFields), "x")
	}
	for len(ids) > 0 {
		chunk := ids[:min(len(ids), 500)]
		ids = ids[len(chunk):]
		argv := append([]any{t.d.k.base, len(fields)}, fields...)
		for _, id := range chunk {
			argv = append(argv, id)
		}
		res, err := rowsScript.Run(ctx, t.d.rdb, []string{t.d.k.lex}, argv...).Slice()
		if err != nil {
			return nil, nil, fmt.Errorf("redis: reading rows: %w", err)
		}
		for i, r := range res {
			f, _ := r.([]any)
			if len(f) != len(fields) || f[0] == nil {
				continue // gone
			}
			row, err := parseRow(chunk[i], f)
			if err != nil {
				return nil, nil, err
			}
			rows[chunk[i]] = row
			if vecs && f[5] != nil {
				x, _ := f[5].(string)
				v, err := decodeVectors([]byte(x))
				if err != nil {
					return nil, nil, err
				}
				vs[chunk[i]] = v
			}
		}
	}
	return rows, vs, nil
}

func parseRow(id string, f []any) (store.Row, error) {
	k, ok := splitID(id)
	if !ok {
		return store.Row{}, fmt.Errorf("%w: row id %q", ErrRecord, id)
	}
	str := func(i int) string { s, _ := f[i].(string); return s }
	num := func(i int) (int64, error) { return strconv.ParseInt(str(i), 10, 64) }
	c, err1 := num(1)
	u, err2 := num(2)
	e, err3 := num(3)
	ttl, err4 := num(4)
	if err := errors.Join(err1, err2, err3, err4); err != nil {
		return store.Row{}, fmt.Errorf("%w: row %q/%q: %v", ErrRecord, k.NS, k.Key, err)
	}
	return store.Row{RowKey: k, Value: []byte(str(0)), Created: fromNano(c), Updated: fromNano(u),
		Expires: fromNano(e), TTLMinutes: int(ttl)}, nil
}

// rows returns the rows at ids as this transaction sees them, with their
// vectors when vecs, in the order of ids (absent ones skipped).
func (t *tx) rows(ctx context.Context, ids []string, vecs bool) ([]store.Row, [][]store.Vector, error) {
	need := ids
	if t.write && len(t.state) > 0 {
		need = nil
		for _, id := range ids {
			if p := t.state[id]; p == nil || p.refreshed || (vecs && !p.deleted && !p.vecsSet) {
				need = append(need, id)
			}
		}
	}
	var committed map[string]store.Row
	var cvecs map[string][]store.Vector
	if len(need) > 0 {
		var err error
		if committed, cvecs, err = t.committedRows(ctx, need, vecs); err != nil {
			return nil, nil, err
		}
	}
	out := make([]store.Row, 0, len(ids))
	var outV [][]store.Vector
	for _, id := range ids {
		k, _ := splitID(id)
		p, hid := t.at(id, k)
		var r store.Row
		var v []store.Vector
		switch {
		case p == nil && hid:
			continue
		case p == nil:
			var ok bool
			if r, ok = committed[id]; !ok {
				continue
			}
			v = cvecs[id]
		case p.deleted:
			continue
		case p.refreshed:
			c, ok := committed[id]
			if !ok || t.hidden(k) {
				continue
			}
			r, v = c, cvecs[id]
			r.Expires = p.row.Expires
		default:
			r = p.row
			if p.vecsSet {
				v = p.vecs
			} else {
				v = cvecs[id]
			}
		}
		out = append(out, r)
		if vecs {
			outV = append(outV, v)
		}
	}
	return out, outV, nil
}

// headers returns the headers of the rows under prefix as this transaction
// sees them (expired ones too), in any order.
func (t *tx) headers(ctx context.Context, prefix store.Namespace) ([]header, error) {
	argv := []any{t.d.k.base}
	for _, r := range prefixRanges(prefix) {
		argv = append(argv, r.min, r.max)
	}
	res, err := headersScript.Run(ctx, t.d.rdb, []string{t.d.k.lex}, argv...).StringSlice()
	if err != nil {
		return nil, fmt.Errorf("redis: reading row headers: %w", err)
	}
	hs := make([]header, 0, len(res)/2)
	for i := 0; i+1 < len(res); i += 2 {
		h, err := parseMeta(res[i], res[i+1])
		if err != nil {
			return nil, err
		}
		if p, hid := t.at(h.id, h.key); p != nil || hid {
			continue // the transaction's own state follows
		}
		hs = append(hs, h)
	}
	if t.write {
		for id, p := range t.state {
			if p.deleted || !under(p.row.NS, prefix) {
				continue
			}
			if p.refreshed {
				// Only the expiry changed: the committed header with it.
				c, _, err := t.committedRows(ctx, []string{id}, false)
				if err != nil {
					return nil, err
				}
				r, ok := c[id]
				if !ok || t.hidden(r.RowKey) {
					continue
				}
				vs, err := t.hasVectors(ctx, id)
				if err != nil {
					return nil, err
				}
				hs = append(hs, header{id: id, key: r.RowKey, updated: unixNano(r.Updated), expires: unixNano(p.row.Expires), vectors: vs})
				continue
			}
			hv := len(p.vecs) > 0
			if !p.vecsSet {
				var err error
				if hv, err = t.hasVectors(ctx, id); err != nil {
					return nil, err
				}
			}
			hs = append(hs, header{id: id, key: p.row.RowKey, updated: unixNano(p.row.Updated), expires: unixNano(p.row.Expires), vectors: hv})
		}
	}
	return hs, nil
}

// hasVectors reports whether the committed row at id has vectors.
func (t *tx) hasVectors(ctx context.Context, id string) (bool, error) {
	ok, err := t.d.rdb.HExists(ctx, t.d.k.items+id, "x").Result()
	if err != nil {
		return false, fmt.Errorf("redis: reading a row: %w", err)
	}
	return ok, nil
}

func (t *tx) Get(ctx context.Context, k store.RowKey) (store.Row, bool, error) {
	rs, _, err := t.rows(ctx, []string{rowID(k)}, false)
	if err != nil || len(rs) == 0 {
		return store.Row{}, false, err
	}
	return rs[0], true, nil
}

func (t *tx) Rows(ctx context.Context, ks []store.RowKey, dst []store.Row) ([]store.Row, error) {
	ids := make([]string, len(ks))
	for i, k := range ks {
		ids[i] = rowID(k)
	}
	rs, _, err := t.rows(ctx, ids, false)
	return append(dst, rs...), err
}

func (t *tx) Scan(ctx context.Context, prefix store.Namespace, now time.Time, withoutVectors bool, after *store.ScanAfter, limit int) ([]store.Row, error) {
	hs, err := t.headers(ctx, prefix)
	if err != nil {
		return nil, err
	}
	hs = slices.DeleteFunc(hs, func(h header) bool { return !h.live(now) || (withoutVectors && h.vectors) })
	// Most recently updated first, then by namespace and key.
	slices.SortFunc(hs, func(a, b header) int {
		if a.updated != b.updated {
			return -cmpInt(a.updated, b.updated)
		}
		return strings.Compare(a.id, b.id)
	})
	if after != nil {
		au, aid := unixNano(after.Updated), rowID(after.RowKey)
		i, _ := slices.BinarySearchFunc(hs, 0, func(h header, _ int) int {
			if h.updated != au {
				return -cmpInt(h.updated, au)
			}
			if c := strings.Compare(h.id, aid); c != 0 {
				return c
			}
			return -1 // the row after itself
		})
		hs = hs[i:]
	}
	if limit >= 0 && len(hs) > limit {
		hs = hs[:limit]
	}
	return t.fetch(ctx, hs)
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// fetch reads the rows of hs in their order.
func (t *tx) fetch(ctx context.Context, hs []header) ([]store.Row, error) {
	ids := make([]string, len(hs))
	for i, h := range hs {
		ids[i] = h.id
	}
	rs, _, err := t.rows(ctx, ids, false)
	return rs, err
}

func (t *tx) Vectors(ctx context.Context, prefix store.Namespace, now time.Time, fn func(k store.RowKey, updated time.Time, vs []store.Vector) error) error {
	hs, err := t.headers(ctx, prefix)
	if err != nil {
		return err
	}
	var ids []string
	for _, h := range hs {
		if h.vectors && h.live(now) {
			ids = append(ids, h.id)
		}
	}
	slices.Sort(ids)
	for len(ids) > 0 {
		chunk := ids[:min(len(ids), 200)]
		ids = ids[len(chunk):]
		rs, vs, err := t.rows(ctx, chunk, true)
		if err != nil {
			return err
		}
		for i, r := range rs {
			if len(vs[i]) == 0 || (!r.Expires.IsZero() && !r.Expires.After(now)) {
				continue
			}
			if err := fn(r.RowKey, r.Updated, vs[i]); err != nil {
				return err
			}
		}
	}
	return nil
}

func (t *tx) Page(ctx context.Context, ns, after string, limit int, now time.Time) ([]store.Row, error) {
	hs, err := t.headers(ctx, store.ParseNamespace(ns))
	if err != nil {
		return nil, err
	}
	hs = slices.DeleteFunc(hs, func(h header) bool { return h.key.NS != ns || h.key.Key <= after || !h.live(now) })
	slices.SortFunc(hs, func(a, b header) int { return strings.Compare(a.key.Key, b.key.Key) })
	if limit >= 0 && len(hs) > limit {
		hs = hs[:limit]
	}
	return t.fetch(ctx, hs)
}

func (t *tx) Namespaces(ctx context.Context, prefix store.Namespace, now time.Time) ([]store.Namespace, error) {
	hs, err := t.headers(ctx, prefix)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	var out []store.Namespace
	for _, h := range hs {
		if h.live(now) && !seen[h.key.NS] {
			seen[h.key.NS] = true
			out = append(out, store.ParseNamespace(h.key.NS))
		}
	}
	return out, nil
}

func (t *tx) mustWrite() error {
	if !t.write || t.done {
		return errors.New("redis: write in a read-only or ended transaction")
	}
	return nil
}

func (t *tx) Put(ctx context.Context, w store.RowWrite) error {
	if err := t.mustWrite(); err != nil {
		return err
	}
	id := rowID(w.RowKey)
	p := t.state[id]
	np := &pending{row: w.Row}
	np.row.Doc = nil
	switch {
	case w.Reindex:
		np.vecs, np.vecsSet = slices.Clone(w.Vectors), true
	case p != nil && (p.deleted || p.vecsSet):
		np.vecs, np.vecsSet = p.vecs, true
	case p == nil && t.hidden(w.RowKey):
		np.vecsSet = true
	}
	t.state[id] = np
	e := unixNano(w.Expires)
	es := ""
	if e != 0 {
		es = expScore(e)
	}
	reindex := "0"
	var x []byte
	if np.vecsSet {
		// The replaced row's vectors are not the row's: say so.
		reindex = "1"
		if len(np.vecs) > 0 {
			x = encodeVectors(np.vecs)
		}
	}
	n := 0
	if reindex == "1" {
		n = len(np.vecs)
	}
	var q, f []byte
	h := ""
	if t.d.codes && n > 0 {
		// The vectors carry their codes (the engine's, or an earlier put
		// of this transaction's whose vectors this one keeps).
		q, f = appendCodes(nil, nil, np.vecs)
		h = hashArg(w.RowKey)
		if w.Reindex {
			t.coded++
		}
	}
	t.touched = append(t.touched, w.RowKey)
	t.args = append(t.args, "P", id, w.Value, unixNano(w.Created), unixNano(w.Updated), e, w.TTLMinutes, reindex, x, n, es, q, f, h)
	if n > 0 {
		attrs := vectorAttrs(w.NS)
		for _, v := range np.vecs {
			var blob []byte
			if t.d.vsets && len(v.Vec) == t.d.dims {
				blob = fp32(v.Vec)
			}
			t.args = append(t.args, blob, attrs)
		}
	}
	return nil
}

func (t *tx) Delete(ctx context.Context, k store.RowKey) error {
	if err := t.mustWrite(); err != nil {
		return err
	}
	id := rowID(k)
	t.state[id] = &pending{deleted: true, vecsSet: true}
	t.touched = append(t.touched, k)
	t.args = append(t.args, "D", id)
	return nil
}

func (t *tx) Refresh(ctx context.Context, k store.RowKey, expires time.Time) error {
	if err := t.mustWrite(); err != nil {
		return err
	}
	id := rowID(k)
	e := unixNano(expires)
	es := ""
	if e != 0 {
		es = expScore(e)
	}
	switch p := t.state[id]; {
	case p == nil:
		if t.hidden(k) {
			return nil
		}
		t.state[id] = &pending{refreshed: true, row: store.Row{RowKey: k, Expires: expires}}
	case p.deleted:
		return nil
	default:
		p.row.Expires = expires
	}
	t.args = append(t.args, "R", id, e, es)
	return nil
}

func (t *tx) DeletePrefix(ctx context.Context, prefix store.Namespace) (int, error) {
	if err := t.mustWrite(); err != nil {
		return 0, err
	}
	if len(prefix) == 0 {
		return 0, fmt.Errorf("%w: empty prefix", store.ErrInvalidNamespace)
	}
	hs, err := t.headers(ctx, prefix)
	if err != nil {
		return 0, err
	}
	for id, p := range t.state {
		if !p.deleted && under(p.row.NS, prefix) {
			t.state[id] = &pending{deleted: true, vecsSet: true}
		}
	}
	t.cleared = append(t.cleared, prefix)
	rs := prefixRanges(prefix)
	t.args = append(t.args, "X", rs[0].min, rs[0].max, rs[1].min, rs[1].max)
	return len(hs), nil
}

func (t *tx) DeleteExpired(ctx context.Context, now time.Time) ([]store.RowKey, error) {
	if err := t.mustWrite(); err != nil {
		return nil, err
	}
	ids, err := t.d.rdb.ZRangeByScore(ctx, t.d.k.exp, &redis.ZRangeBy{Min: "-inf", Max: expScore(now.UnixNano())}).Result()
	if err != nil {
		return nil, fmt.Errorf("redis: reading expiries: %w", err)
	}
	// Rows this transaction wrote with an expiry are in its state.
	for id, p := range t.state {
		if !p.deleted && !p.row.Expires.IsZero() {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	ids = slices.Compact(ids)
	rs, _, err := t.rows(ctx, ids, false)
	if err != nil {
		return nil, err
	}
	var out []store.RowKey
	for _, r := range rs {
		if !r.Expires.IsZero() && r.Expires.Before(now) {
			out = append(out, r.RowKey)
			if err := t.Delete(ctx, r.RowKey); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}
