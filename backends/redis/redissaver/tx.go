package redissaver

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/checkpointer/engine"
)

// ErrLockWait is wrapped by the error of an Update that waited longer than
// the lease for a thread's lock while holding another (two Updates taking
// the same threads in opposite orders): it gives up and changes nothing,
// and the other goes on.
var ErrLockWait = errors.New("redis: gave up waiting for a thread's lock")

// tx is a DriverTx. Redis has no rollback, so it makes one: every change
// is one batchScript on one thread, run at once under the thread's lock
// (a lease key holding the Update's token, which every write checks);
// before the first removal, deletion or overwrite of a thread its keys
// are saved with DUMP, and when the Update fails they are put back with
// RESTORE, still under the lock, before it is released (rollbackScript:
// restored to hold names first, so a refused RESTORE leaves the thread as
// the Update left it). Before the first save the driver checks once that
// the server lets it RESTORE (probeRestore): without it such an Update
// fails before any change. A put or pending writes (an import) only sets
// fields and adds members: before each, what those fields and members
// held is saved (touchFields), and put back the same way
// (rollbackFieldsScript), so an import costs what it writes, not what the
// thread holds.
type tx struct {
	d     *driver
	token string

	mu    sync.Mutex
	held  []string                     // threads locked, in the order taken
	saved map[string]map[string][]byte // thread -> key -> DUMP ("" payload: the key did not exist)
	// undo is, per thread a put or pending writes of the Update changed
	// before (or without) a save of its keys, what each hash field and
	// sorted-set member they wrote held before (touchFields).
	undo map[string]*fieldUndo
	// fs are the fences of the Update's writes so far (Fence, Put,
	// PutWrites): every later script of the Update checks them (fence.go).
	fs fences
}

// Update runs fn as one transaction over the threads it changes (see
// tx); a lease renewer keeps their locks while fn runs.
func (d *driver) Update(ctx context.Context, fn func(tx checkpointer.DriverTx) error) error {
	t := &tx{d: d, token: newToken(), fs: fences{c: d.fc}}
	stop := make(chan struct{})
	renewed := make(chan struct{})
	go t.renew(ctx, stop, renewed)
	err := fn(t)
	close(stop)
	<-renewed
	bg := context.WithoutCancel(ctx)
	if err != nil {
		if rbErr := t.rollback(bg); rbErr != nil {
			err = errors.Join(err, fmt.Errorf("redis: restoring the threads after the failure: %w", rbErr))
		}
	}
	t.release(bg)
	return err
}

// renew extends the leases held every lease/3 until stop.
func (t *tx) renew(ctx context.Context, stop <-chan struct{}, done chan<- struct{}) {
	defer close(done)
	tick := time.NewTicker(t.d.lease / 3)
	defer tick.Stop()
	for {
		select {
		case <-stop:
			return
		case <-tick.C:
		}
		t.mu.Lock()
		held := slices.Clone(t.held)
		t.mu.Unlock()
		for _, th := range held {
			_ = renewScript.Run(context.WithoutCancel(ctx), t.d.rdb, []string{t.d.keys(th).lock}, t.token, t.d.lease.Milliseconds()).Err()
		}
	}
}

func (t *tx) release(ctx context.Context) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, th := range t.held {
		_ = releaseScript.Run(ctx, t.d.rdb, []string{t.d.keys(th).lock}, t.token).Err()
	}
	t.held = nil
}

func (t *tx) holds(thread string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return slices.Contains(t.held, thread)
}

// lock takes the locks of threads not held yet, in sorted order. It
// waits for a lock another Update holds; holding locks already, it waits
// at most the lease (ErrLockWait), so that two Updates locking in
// opposite orders cannot wait for each other forever.
func (t *tx) lock(ctx context.Context, threads []string) error {
	threads = slices.Clone(threads)
	slices.Sort(threads)
	threads = slices.Compact(threads)
	for _, th := range threads {
		if t.holds(th) {
			continue
		}
		var deadline time.Time
		if t.holdsAny() {
			deadline = time.Now().Add(t.d.lease)
		}
		k := t.d.keys(th).lock
		for wait := time.Millisecond; ; wait = min(2*wait, 50*time.Millisecond) {
			ok, err := t.d.rdb.SetNX(ctx, k, t.token, t.d.lease).Result()
			if err != nil {
				return fmt.Errorf("lock %s: %w", checkpointer.NameID("thread", th), err)
			}
			if ok {
				break
			}
			if !deadline.IsZero() && time.Now().After(deadline) {
				return fmt.Errorf("%w: %s", ErrLockWait, checkpointer.NameID("thread", th))
			}
			if err := sleep(ctx, wait); err != nil {
				return fmt.Errorf("lock %s: %w", checkpointer.NameID("thread", th), err)
			}
		}
		t.mu.Lock()
		t.held = append(t.held, th)
		t.mu.Unlock()
	}
	return nil
}

func (t *tx) holdsAny() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.held) > 0
}

// touch locks thread and, before its first change, saves its keys.
func (t *tx) touch(ctx context.Context, thread string) error {
	if err := t.lock(ctx, []string{thread}); err != nil {
		return err
	}
	if _, ok := t.saved[thread]; ok {
		return nil
	}
	if err := t.d.probeRestore(ctx, thread); err != nil {
		return err
	}
	ks, err := t.d.threadKeys(ctx, thread)
	if err != nil {
		return err
	}
	cmds := make([]*redis.StringCmd, len(ks))
	_, err = t.d.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		for i, key := range ks {
			cmds[i] = p.Dump(ctx, key)
		}
		return nil
	})
	if err != nil && !errors.Is(err, redis.Nil) {
		return fmt.Errorf("save %s: %w", checkpointer.NameID("thread", thread), err)
	}
	saved := map[string][]byte{}
	for i, c := range cmds {
		b, err := c.Bytes()
		if errors.Is(err, redis.Nil) {
			continue
		}
		if err != nil {
			return fmt.Errorf("save %s: %w", checkpointer.NameID("thread", thread), err)
		}
		saved[ks[i]] = b
	}
	if t.saved == nil {
		t.saved = map[string]map[string][]byte{}
	}
	t.saved[thread] = saved
	return nil
}

// fieldsOf names fields of a hash, or members of a sorted set.
type fieldsOf struct {
	key    string
	fields []string
}

// fieldUndo is what rollbackFieldsScript needs to put back the fields and
// members an Update's puts and pending writes changed on one thread.
type fieldUndo struct {
	keys []string       // the thread's lock, then each key changed
	idx  map[string]int // key -> its index in keys (1-based, as Lua's)
	seen map[string]bool
	argv []any // per change: op ("H" set, "h" delete, "z" remove), key index, field, value
}

// touchFields locks thread and, unless its keys were saved whole (touch),
// saves the previous state of the hash fields hs and sorted-set members zs
// a put or pending writes is about to write, those saved before excepted:
// one round trip, whatever the thread holds. A put or pending writes only
// sets fields and adds members, so these put back undo them; saving the
// thread's keys whole (DUMP) instead cost each import of a few checkpoints
// — each batch checkpointer/durable writes — a copy of the whole thread
// sent to the client (an async write of a 6 MB thread took ~250 KB of
// DUMPs a step, and ran 6–24× slower than the same puts synchronous).
func (t *tx) touchFields(ctx context.Context, thread string, hs, zs []fieldsOf) error {
	if err := t.lock(ctx, []string{thread}); err != nil {
		return err
	}
	if _, ok := t.saved[thread]; ok {
		return nil // saved whole before this change
	}
	u := t.undo[thread]
	first := u == nil
	if first {
		u = &fieldUndo{keys: []string{t.d.keys(thread).lock}, idx: map[string]int{}, seen: map[string]bool{}}
		if t.undo == nil {
			t.undo = map[string]*fieldUndo{}
		}
		t.undo[thread] = u
	}
	type pending struct {
		key, field string
		hash       bool
	}
	var todo []pending
	for i, set := range [][]fieldsOf{hs, zs} {
		for _, h := range set {
			for _, f := range h.fields {
				if id := h.key + sep + f; !u.seen[id] {
					u.seen[id] = true
					todo = append(todo, pending{h.key, f, i == 0})
				}
			}
		}
	}
	if len(todo) == 0 {
		return nil
	}
	hcmds := make([]*redis.StringCmd, len(todo))
	zcmds := make([]*redis.FloatCmd, len(todo))
	var held *redis.IntCmd
	_, err := t.d.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		if first {
			held = p.Exists(ctx, t.d.keys(thread).fixed()...)
		}
		for i, c := range todo {
			if c.hash {
				hcmds[i] = p.HGet(ctx, c.key, c.field)
			} else {
				zcmds[i] = p.ZScore(ctx, c.key, c.field)
			}
		}
		return nil
	})
	if err != nil && !errors.Is(err, redis.Nil) {
		return fmt.Errorf("save %s: %w", checkpointer.NameID("thread", thread), err)
	}
	if first && held.Val() == 0 {
		// The thread holds nothing: undoing the Update is deleting its
		// keys, as touch's save of no key does (rollbackScript), with
		// nothing saved for each later put (an import of a whole thread
		// costs no more than before).
		delete(t.undo, thread)
		if t.saved == nil {
			t.saved = map[string]map[string][]byte{}
		}
		t.saved[thread] = map[string][]byte{}
		return nil
	}
	for i, c := range todo {
		ki, ok := u.idx[c.key]
		if !ok {
			u.keys = append(u.keys, c.key)
			ki = len(u.keys)
			u.idx[c.key] = ki
		}
		if c.hash {
			v, err := hcmds[i].Result()
			switch {
			case errors.Is(err, redis.Nil):
				u.argv = append(u.argv, "h", ki, c.field, "")
			case err != nil:
				return fmt.Errorf("save %s: %w", checkpointer.NameID("thread", thread), err)
			default:
				u.argv = append(u.argv, "H", ki, c.field, v)
			}
			continue
		}
		_, err := zcmds[i].Result()
		switch {
		case errors.Is(err, redis.Nil):
			u.argv = append(u.argv, "z", ki, c.field, "")
		case err != nil:
			return fmt.Errorf("save %s: %w", checkpointer.NameID("thread", thread), err)
		}
		// A member there before stays: adding it again changed nothing
		// (every member's score is 0).
	}
	return nil
}

// rollbackFieldsScript puts back the fields and members an Update's puts
// and pending writes changed on a thread (touchFields). KEYS: the thread's
// lock, then the keys changed. ARGV: the Update's token, then per change
// an op ("H": set the field to the value; "h": delete the field; "z":
// remove the member), the key's index in KEYS, the field and the value.
var rollbackFieldsScript = redis.NewScript(`
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 'LOST' end
for i = 2, #ARGV, 4 do
  local k, op = KEYS[tonumber(ARGV[i + 1])], ARGV[i]
  if op == 'H' then redis.call('HSET', k, ARGV[i + 2], ARGV[i + 3])
  elseif op == 'h' then redis.call('HDEL', k, ARGV[i + 2])
  else redis.call('ZREM', k, ARGV[i + 2]) end
end
return 'OK'
`)

// threadKeys are every key of thread but its lock.
func (d *driver) threadKeys(ctx context.Context, thread string) ([]string, error) {
	k := d.keys(thread)
	cps, err := d.rdb.ZRange(ctx, k.wk, 0, -1).Result()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", checkpointer.NameID("thread", thread), err)
	}
	ks := k.fixed()
	for _, m := range cps {
		ns, id, _ := splitPair(m)
		ks = append(ks, k.writes(ns, id))
	}
	return ks, nil
}

// rollback puts the saved threads back, each in one script
// (rollbackScript): every saved key is restored to its hold name first,
// so a refused RESTORE changes nothing of the thread.
func (t *tx) rollback(ctx context.Context) error {
	var errs []error
	for thread, saved := range t.saved {
		ks, err := t.d.threadKeys(ctx, thread)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		k := t.d.keys(thread)
		keys := make([]string, 0, 1+len(ks)+2*len(saved))
		keys = append(keys, k.lock)
		keys = append(keys, ks...)
		argv := make([]any, 0, 2+len(saved))
		argv = append(argv, t.token, len(ks))
		holds := make([]string, 0, len(saved))
		for key, dump := range saved {
			keys = append(keys, key)
			holds = append(holds, holdName(key))
			argv = append(argv, dump)
		}
		keys = append(keys, holds...)
		if len(saved) > 0 {
			// A deletion took the thread out of the index: put it back
			// before its keys, so that no crash or failed call between the
			// two leaves a restored thread that forget cannot find (an
			// entry whose thread holds nothing is skipped by readers).
			// When the entry is refused, the thread stays as the failed
			// Update left it rather than come back unindexed.
			err = t.d.rdb.ZAdd(ctx, t.d.threadsKey(), redis.Z{Member: thread}).Err()
		}
		if err == nil {
			var r string
			r, err = rollbackScript.Run(ctx, t.d.rdb, keys, argv...).Text()
			if err == nil {
				err = replyErr(thread, r)
			}
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", checkpointer.NameID("thread", thread), err))
		}
	}
	// After the keys saved whole: a thread saved whole after its puts
	// changed fields holds those changes in its DUMPs, which these undo.
	for thread, u := range t.undo {
		if len(u.argv) == 0 {
			continue
		}
		argv := append([]any{t.token}, u.argv...)
		r, err := rollbackFieldsScript.Run(ctx, t.d.rdb, u.keys, argv...).Text()
		if err == nil {
			err = replyErr(thread, r)
		}
		if err == nil {
			// A thread the Update made new holds nothing again: out of
			// the index, as a refused put leaves it.
			err = t.d.settleIndex(ctx, thread, t.d.keys(thread))
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", checkpointer.NameID("thread", thread), err))
		}
	}
	return errors.Join(errs...)
}

// holdName is where rollbackScript restores key before renaming it back:
// the key, a NUL byte and "rollback" — in the thread's slot (the hash tag
// is unchanged), and no key of the layout (identifiers hold no NUL; only
// a writes key holds one, once) nor the hold name of a refused large
// write (the key and a NUL byte).
func holdName(key string) string { return key + sep + "rollback" }

// rollbackScript puts a thread back as an Update saved it. KEYS: the
// thread's lock, its n current keys, then its m saved keys, then their m
// hold names (holdName). ARGV: the Update's token, n, then the m DUMP
// payloads. It restores every payload to its hold name first and, when a
// RESTORE fails (an ACL without RESTORE: NOPERM; memory), deletes the
// holds made and returns that error having changed nothing of the
// thread; only then does it delete the current keys and rename the holds
// to the saved names. A script keeps the writes it made before an error,
// so deleting first (the old order) left the thread empty when RESTORE
// was refused (TestRollbackRestoreRefused).
var rollbackScript = redis.NewScript(`
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 'LOST' end
local n = tonumber(ARGV[2])
local m = #ARGV - 2
local s, h = n + 1, n + 1 + m
for i = 1, m do
  local r = redis.pcall('RESTORE', KEYS[h + i], 0, ARGV[2 + i], 'REPLACE')
  if type(r) == 'table' and r.err then
    for j = 1, i - 1 do redis.call('DEL', KEYS[h + j]) end
    return r
  end
end
for i = 2, n + 1 do redis.call('DEL', KEYS[i]) end
for i = 1, m do redis.call('RENAME', KEYS[h + i], KEYS[s + i]) end
return 'OK'
`)

// restoreProbe tells whether the server lets this client RESTORE, before
// an Update changes anything: it DUMPs the thread's lock (which the
// Update holds, so it exists), RESTOREs it to the lock's hold name and
// deletes that, in one script; the reply is RESTORE's error, if any.
var restoreProbe = redis.NewScript(`
local d = redis.call('DUMP', KEYS[1])
if not d then return 'LOST' end
local r = redis.pcall('RESTORE', KEYS[2], 0, d, 'REPLACE')
if type(r) == 'table' and r.err then return r end
redis.call('DEL', KEYS[2])
return 'OK'
`)

// probeRestore fails unless the server lets this client RESTORE, which
// undoing a failed Update needs; an ACL without it ("-@dangerous") makes
// every Update fail before its first change instead of leaving a change
// it could not undo. It runs once per driver until it succeeds.
func (d *driver) probeRestore(ctx context.Context, thread string) error {
	if d.restoreOK.Load() {
		return nil
	}
	k := d.keys(thread)
	r, err := restoreProbe.Run(ctx, d.rdb, []string{k.lock, holdName(k.lock)}).Text()
	if err == nil && r != replyOK {
		err = replyErr(thread, r)
	}
	if err != nil {
		return fmt.Errorf("redis: %s: the server refuses what undoing a failed removal, copy, import or re-encryption needs (DUMP and RESTORE): %w", checkpointer.NameID("thread", thread), err)
	}
	d.restoreOK.Store(true)
	return nil
}

// apply runs b on thread, which touch has locked and saved, fenced by
// the Update's fences.
func (t *tx) apply(ctx context.Context, thread string, b *batch) (string, error) {
	if b.empty() {
		return replyOK, nil
	}
	k := t.d.keys(thread)
	for {
		if err := t.d.fenceBatch(ctx, b, k, &t.fs); err != nil {
			return "", fmt.Errorf("%s: %w", checkpointer.NameID("thread", thread), err)
		}
		r, err := t.d.run(ctx, t.token, b)
		if err != nil {
			return "", fmt.Errorf("%s: %w", checkpointer.NameID("thread", thread), err)
		}
		if !t.d.refused(r, k) {
			return r, nil
		}
	}
}

func (t *tx) Put(ctx context.Context, p *checkpointer.PutRows) error {
	t.fs.add(p.Fence)
	if _, _, err := t.fs.value(ctx, 0); err != nil {
		return err
	}
	k := t.d.keys(p.Thread)
	f := nsID(p.NS, p.ID)
	hs := []fieldsOf{{k.cp, []string{f}}, {k.par, []string{f}}, {k.hd, []string{f}}, {k.val, make([]string, 0, len(p.Values))}}
	for _, v := range p.Values {
		hs[3].fields = append(hs[3].fields, valField(p.NS, v.Channel, v.Version))
	}
	zs := []fieldsOf{{k.byNS, []string{f}}, {k.byID, []string{nsID(p.ID, p.NS)}}}
	if err := t.touchFields(ctx, p.Thread, hs, zs); err != nil {
		return err
	}
	return t.d.put(ctx, t.token, p, &t.fs)
}

func (t *tx) PutWrites(ctx context.Context, w *checkpointer.WriteRows) error {
	t.fs.add(w.Fence)
	if _, _, err := t.fs.value(ctx, 0); err != nil {
		return err
	}
	k := t.d.keys(w.Thread)
	h := fieldsOf{k.writes(w.NS, w.Checkpoint), make([]string, 0, len(w.Rows))}
	for _, r := range w.Rows {
		h.fields = append(h.fields, writeField(w.Task, r.Idx))
	}
	if err := t.touchFields(ctx, w.Thread, []fieldsOf{h}, []fieldsOf{{k.wk, []string{nsID(w.NS, w.Checkpoint)}}}); err != nil {
		return err
	}
	return t.d.putWrites(ctx, t.token, w, &t.fs)
}

// Fence checks f now and adds it to the fences every later script of the
// Update checks.
func (t *tx) Fence(ctx context.Context, f checkpointer.WriteFence) error {
	if !fenced(f) {
		return f.Check(ctx)
	}
	t.fs.add(f)
	_, _, err := t.fs.value(ctx, 0)
	return err
}

// Lock takes the threads of rs: a put to them waits for the Update, and
// the puts that ran before are in the heads read after.
func (t *tx) Lock(ctx context.Context, rs []checkpointer.Removal, sel checkpointer.HeadSelector) ([]checkpointer.Head, error) {
	threads := make([]string, len(rs))
	for i, r := range rs {
		threads[i] = r.Thread
	}
	if err := t.lock(ctx, threads); err != nil {
		return nil, err
	}
	return t.d.heads(ctx, sel)
}

func (t *tx) Heads(ctx context.Context, sel checkpointer.HeadSelector) ([]checkpointer.Head, error) {
	return t.d.heads(ctx, sel)
}

// threadHeads reads the heads of thread (of namespace ns when not nil),
// checkpoints and orphan write sets, in one MULTI.
func (d *driver) threadHeads(ctx context.Context, thread string, ns *string) ([]checkpointer.Head, error) {
	k := d.keys(thread)
	var par, hd *redis.MapStringStringCmd
	var wk *redis.StringSliceCmd
	_, err := d.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		par, hd, wk = p.HGetAll(ctx, k.par), p.HGetAll(ctx, k.hd), p.ZRange(ctx, k.wk, 0, -1)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("heads: %w", err)
	}
	var out []checkpointer.Head
	stored := map[string]bool{}
	for f, hb := range hd.Val() {
		cns, id, ok := splitPair(f)
		if !ok {
			return nil, fmt.Errorf("%w: head field %q", ErrRecord, f)
		}
		if ns != nil && cns != *ns {
			continue
		}
		h, err := unpackHead([]byte(hb))
		if err != nil {
			return nil, err
		}
		stored[f] = true
		out = append(out, checkpointer.Head{Thread: thread, NS: cns, ID: id, Stored: true, Parent: par.Val()[f], V: h.v, RunID: h.runID})
	}
	for _, m := range wk.Val() {
		cns, id, _ := splitPair(m)
		if stored[m] || (ns != nil && cns != *ns) {
			continue
		}
		out = append(out, checkpointer.Head{Thread: thread, NS: cns, ID: id})
	}
	return out, nil
}

func (d *driver) heads(ctx context.Context, sel checkpointer.HeadSelector) ([]checkpointer.Head, error) {
	if len(sel.RunIDs) == 0 {
		var out []checkpointer.Head
		for _, th := range sel.Threads {
			hs, err := d.threadHeads(ctx, th, sel.NS)
			if err != nil {
				return nil, err
			}
			out = append(out, hs...)
		}
		return out, nil
	}
	// Every thread's heads: the run id is in no index (a pass over the
	// heads, as a SQL driver's over its rows).
	threads, err := d.rdb.ZRange(ctx, d.threadsKey(), 0, -1).Result()
	if err != nil {
		return nil, fmt.Errorf("heads: %w", err)
	}
	var out []checkpointer.Head
	for _, th := range threads {
		hs, err := d.threadHeads(ctx, th, nil)
		if err != nil {
			return nil, err
		}
		match := map[string]bool{}
		for _, h := range hs {
			if h.Stored && h.RunID != "" && slices.Contains(sel.RunIDs, h.RunID) {
				match[h.NS] = true
			}
		}
		for _, h := range hs {
			if match[h.NS] {
				out = append(out, h)
			}
		}
	}
	return out, nil
}

func (t *tx) Remove(ctx context.Context, rs []checkpointer.Removal, countOnly bool) (checkpointer.SweepReport, error) {
	var rep checkpointer.SweepReport
	for _, r := range rs {
		if !countOnly {
			if err := t.touch(ctx, r.Thread); err != nil {
				return rep, err
			}
		}
		k := t.d.keys(r.Thread)
		var hd *redis.MapStringStringCmd
		var vals *redis.StringSliceCmd
		ws := make([]*redis.MapStringStringCmd, len(r.IDs))
		_, err := t.d.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
			hd, vals = p.HGetAll(ctx, k.hd), p.HKeys(ctx, k.val)
			for i, id := range r.IDs {
				ws[i] = p.HGetAll(ctx, k.writes(r.NS, id))
			}
			return nil
		})
		if err != nil {
			return rep, fmt.Errorf("remove: %w", err)
		}
		gone := map[string]bool{}
		for _, id := range r.IDs {
			gone[id] = true
		}
		b := newBatch(k)
		live := map[string]bool{}
		for f, hb := range hd.Val() {
			ns, id, _ := splitPair(f)
			if ns != r.NS {
				continue
			}
			if gone[id] {
				rep.Checkpoints++
				b.cmd("HDEL", k.cp, 1, f)
				b.cmd("HDEL", k.par, 1, f)
				b.cmd("HDEL", k.hd, 1, f)
				b.cmd("ZREM", k.byNS, 1, f)
				b.cmd("ZREM", k.byID, 1, nsID(id, ns))
				continue
			}
			h, err := unpackHead([]byte(hb))
			if err != nil {
				return rep, err
			}
			for ch, ver := range h.versions {
				live[valField(ns, ch, ver)] = true
			}
		}
		// The namespace's values no remaining checkpoint references.
		for _, f := range vals.Val() {
			ns, _, _ := splitPair(f)
			if ns == r.NS && !live[f] {
				rep.Blobs++
				b.cmd("HDEL", k.val, 1, f)
			}
		}
		for i, id := range r.IDs {
			w := ws[i].Val()
			if len(w) == 0 {
				continue
			}
			keep := slices.Contains(r.KeepSends, id)
			var del []any
			for f, rec := range w {
				if keep {
					p, err := unpack([]byte(rec), 4)
					if err != nil {
						return rep, err
					}
					if string(p[1]) == checkpointer.ChannelTasks {
						continue
					}
				}
				del = append(del, f)
			}
			rep.Writes += int64(len(del))
			if len(del) == len(w) {
				b.cmd("DEL", k.writes(r.NS, id), 1)
				b.cmd("ZREM", k.wk, 1, nsID(r.NS, id))
			} else if len(del) > 0 {
				b.cmd("HDEL", k.writes(r.NS, id), 1, del...)
			}
		}
		if countOnly {
			continue
		}
		res, err := t.apply(ctx, r.Thread, b)
		if err != nil {
			return rep, fmt.Errorf("remove: %w", err)
		}
		if err := replyErr(r.Thread, res); err != nil {
			return rep, err
		}
	}
	return rep, nil
}

func (t *tx) DeleteThreads(ctx context.Context, threads []string, countOnly bool) (checkpointer.SweepReport, error) {
	var rep checkpointer.SweepReport
	if !countOnly {
		if err := t.lock(ctx, threads); err != nil {
			return rep, err
		}
	}
	for _, th := range threads {
		k := t.d.keys(th)
		ks, err := t.d.threadKeys(ctx, th)
		if err != nil {
			return rep, err
		}
		var ncp, nval *redis.IntCmd
		nw := make([]*redis.IntCmd, 0, len(ks))
		_, err = t.d.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
			ncp, nval = p.HLen(ctx, k.hd), p.HLen(ctx, k.val)
			for _, key := range ks[len(k.fixed()):] {
				nw = append(nw, p.HLen(ctx, key))
			}
			return nil
		})
		if err != nil {
			return rep, fmt.Errorf("delete thread: %w", err)
		}
		rep.Checkpoints += ncp.Val()
		rep.Blobs += nval.Val()
		for _, c := range nw {
			rep.Writes += c.Val()
		}
		if countOnly {
			continue
		}
		if err := t.touch(ctx, th); err != nil {
			return rep, err
		}
		b := newBatch(k)
		for _, key := range ks {
			b.cmd("DEL", key, 1)
		}
		res, err := t.apply(ctx, th, b)
		if err != nil {
			return rep, fmt.Errorf("delete thread: %w", err)
		}
		if err := replyErr(th, res); err != nil {
			return rep, err
		}
		// Under the lock: a put waiting for it re-adds the thread after.
		if err := t.d.rdb.ZRem(ctx, t.d.threadsKey(), th).Err(); err != nil {
			return rep, fmt.Errorf("delete thread: %w", err)
		}
	}
	return rep, nil
}

func (t *tx) Rows(ctx context.Context, thread string) (*checkpointer.ThreadRows, error) {
	k := t.d.keys(thread)
	var cp, par, hd, val *redis.MapStringStringCmd
	var wk *redis.StringSliceCmd
	_, err := t.d.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		cp, par, hd, val, wk = p.HGetAll(ctx, k.cp), p.HGetAll(ctx, k.par), p.HGetAll(ctx, k.hd), p.HGetAll(ctx, k.val), p.ZRange(ctx, k.wk, 0, -1)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("rows: %w", err)
	}
	rows := &checkpointer.ThreadRows{}
	for f, hb := range hd.Val() {
		ns, id, _ := splitPair(f)
		h, err := unpackHead([]byte(hb))
		if err != nil {
			return nil, err
		}
		rec, err := unpack([]byte(cp.Val()[f]), 3)
		if err != nil {
			return nil, err
		}
		rows.Checkpoints = append(rows.Checkpoints, checkpointer.PutRows{Thread: thread, NS: ns, ID: id, Parent: par.Val()[f],
			V: h.v, Type: string(rec[0]), Doc: rec[1], Meta: rec[2], Versions: h.versions})
	}
	for f, rec := range val.Val() {
		ns, rest, _ := splitPair(f)
		ch, ver, _ := splitPair(rest)
		v, err := unpackValue(ch, ver, []byte(rec))
		if err != nil {
			return nil, err
		}
		rows.Values = append(rows.Values, checkpointer.NamespacedValue{NS: ns, ValueRow: v})
	}
	cmds := make([]*redis.MapStringStringCmd, len(wk.Val()))
	if len(cmds) > 0 {
		_, err = t.d.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
			for i, m := range wk.Val() {
				ns, id, _ := splitPair(m)
				cmds[i] = p.HGetAll(ctx, k.writes(ns, id))
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("rows: %w", err)
		}
	}
	for i, m := range wk.Val() {
		ns, id, _ := splitPair(m)
		ws, err := writeRows(cmds[i].Val())
		if err != nil {
			return nil, err
		}
		for _, w := range ws {
			rows.Writes = append(rows.Writes, checkpointer.NamespacedWrite{NS: ns, Checkpoint: id, WriteRow: w})
		}
	}
	return rows, nil
}

func (t *tx) Overwrite(ctx context.Context, thread string, rows *checkpointer.ThreadRows) error {
	if err := t.touch(ctx, thread); err != nil {
		return err
	}
	k := t.d.keys(thread)
	b := newBatch(k)
	for i := range rows.Checkpoints {
		c := rows.Checkpoints[i]
		c.Thread = thread
		versions, v := c.Versions, c.V
		if versions == nil || v == 0 {
			doc, err := engine.DecodeDocument(c.Doc)
			if err != nil {
				return fmt.Errorf("%w: %s: %w", ErrRecord, checkpointer.NameID("checkpoint", c.ID), err)
			}
			versions, v = doc.ChannelVersions(), doc.V()
		}
		f := nsID(c.NS, c.ID)
		h := head{v: v, runID: runID(c.Meta), stamp: t.d.newStamp(), versions: versions}
		b.cmd("HSET", k.cp, 2, f, pack([]byte(c.Type), c.Doc, c.Meta))
		b.cmd("HSET", k.par, 2, f, c.Parent)
		b.cmd("HSET", k.hd, 2, f, h.pack())
		b.cmd("ZADD", k.byNS, 2, 0, f)
		b.cmd("ZADD", k.byID, 2, 0, nsID(c.ID, c.NS))
	}
	for _, v := range rows.Values {
		b.cmd("HSET", k.val, 2, valField(v.NS, v.Channel, v.Version), packValue(v.ValueRow))
	}
	for _, w := range rows.Writes {
		b.cmd("HSET", k.writes(w.NS, w.Checkpoint), 2, writeField(w.Task, w.Idx), packWrite(w.Path, w.WriteRow))
		b.cmd("ZADD", k.wk, 2, 0, nsID(w.NS, w.Checkpoint))
	}
	if len(rows.Checkpoints) > 0 || len(rows.Values) > 0 || len(rows.Writes) > 0 {
		// Indexed before its rows, as a put: a thread holding only
		// values or pending writes included (RowThreads).
		if err := t.d.rdb.ZAdd(ctx, t.d.threadsKey(), redis.Z{Member: thread}).Err(); err != nil {
			return fmt.Errorf("overwrite: %w", err)
		}
	}
	r, err := t.apply(ctx, thread, b)
	if err != nil {
		return fmt.Errorf("overwrite: %w", err)
	}
	return replyErr(thread, r)
}
