package redissaver

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/memvault/memvault/checkpointer"
)

// batchScript runs one change of one thread atomically: it checks the
// thread's lock, then the guards, then runs the commands; a failed check
// changes nothing. KEYS[1] is the thread's lock and KEYS[2] its id index
// (the reply says whether the thread was new); the other keys are named
// by index.
//
// ARGV: token, fence key index (0: none), fence value, guard count, (key
// index, field) per guard, then per command: name, key index, argument
// count, arguments.
//
// token "" (a write outside Update) needs the lock free: LOCKED
// otherwise. Any other token needs the lock held with it: LOST otherwise
// (the lease ran out and another writer may have been in). A fenced
// write needs the fence counter (fence.go) to hold the value it saw
// before checking its keys: FENCED:<value> otherwise. A guard is an
// HEXISTS that must hold: MISSING otherwise. The reply is NEW when the
// thread held no checkpoint before, else OK.
//
// The commands come from this package only: HSET, HSETNX, HDEL, ZADD,
// ZREM, DEL and RESTORE, each of which can fail only on a wrong key type
// (not in a thread's own keys) or memory. Redis refuses a script's write
// for memory (maxmemory) only when it is the script's first write — a
// script that has written goes on, past the limit, to stay atomic — and
// every script here checks before its first write, so an out-of-memory
// server fails a script whole (TestScriptOOM).
var batchScript = redis.NewScript(`
local tok = ARGV[1]
local held = redis.call('GET', KEYS[1])
if tok == '' then
  if held then return 'LOCKED' end
elseif held ~= tok then
  return 'LOST'
end
local fk = tonumber(ARGV[2])
if fk > 0 then
  local cur = redis.call('GET', KEYS[fk]) or '0'
  if cur ~= ARGV[3] then return 'FENCED:' .. cur end
end
local i = 4
local ng = tonumber(ARGV[i])
i = i + 1
for g = 1, ng do
  if redis.call('HEXISTS', KEYS[tonumber(ARGV[i])], ARGV[i + 1]) == 0 then return 'MISSING' end
  i = i + 2
end
local new = redis.call('EXISTS', KEYS[2]) == 0
while i <= #ARGV do
  local n = tonumber(ARGV[i + 2])
  redis.call(ARGV[i], KEYS[tonumber(ARGV[i + 1])], unpack(ARGV, i + 3, i + 2 + n))
  i = i + 3 + n
end
if new then return 'NEW' end
return 'OK'
`)

// guardLua opens putScript and writesScript: the lock check (ARGV[1],
// the token, against KEYS[1]) and the fence check (ARGV[2], the fence
// value or "", against the last key), as batchScript's.
const guardLua = `
local tok = ARGV[1]
local held = redis.call('GET', KEYS[1])
if tok == '' then
  if held then return 'LOCKED' end
elseif held ~= tok then
  return 'LOST'
end
if ARGV[2] ~= '' then
  local cur = redis.call('GET', KEYS[#KEYS]) or '0'
  if cur ~= ARGV[2] then return 'FENCED:' .. cur end
end
`

// putScript is a put's own script: batchScript's checks (the lock, the
// fence, the parent's guard) and a put's commands, without the generic
// decoding (INFO commandstats put the generic script at 21.5 µs of
// server time per put). KEYS: lock, cp, par, hd, ns, id, val, then on a
// single server the thread index, then the fence counter when fenced (the
// last key). ARGV: token, fence value ("" for none), the parent's field
// ("" for none), the checkpoint's field ns·id, its record, its parent,
// its head, its id·ns member, the thread id to add to the index (KEYS[8];
// "" on a cluster, where the index is in another slot), then a field and
// a record per value. Replies as batchScript's; on a single server the
// script indexes the thread itself (when it held no checkpoint: the EXISTS
// that tells costs less than the ZADD it saves), so no caller needs NEW.
var putScript = redis.NewScript(putScriptSrc)

// putScriptSrc is putScript's source.
const putScriptSrc = guardLua + `
local function refuse(r) return r end` + putRecordLua + `
for i = 10, #ARGV, 2 do
  redis.call('HSETNX', KEYS[7], ARGV[i], ARGV[i + 1])
end` + replyLua

// replyLua ends a put's or pending writes' script: NEW when the thread
// held no checkpoint (new), else OK.
const replyLua = `
if new then return 'NEW' end
return 'OK'
`

// putScriptFNX is putScript for a server with HSETEX (Redis 8), for a
// put of two values or more: the values go in one HSETEX FNX (keepFirstLua)
// instead of one HSETNX each.
var putScriptFNX = redis.NewScript(guardLua + `
local function refuse(r) return r end` + putRecordLua + keepFirstLua("KEYS[7]", 10) + replyLua)

// keepFirstLua writes the fields and values of ARGV[from…] to key, each
// field keeping the value it holds (HSETNX's rule), in one command when
// none of them is stored: HSETEX FNX sets all the fields when none exists
// and none otherwise (reply 0), in which case, or where the server has no
// HSETEX (an error, which pcall returns), each field goes in an HSETNX of
// its own. A put's values and a task's writes are almost always new, and
// every redis.call costs the server about as much as a small command:
// callgrind, Redis 8, BenchmarkShape's rows, server instructions per op,
// two runs: a task's 3 writes 85.7 k → 79.4–80.7 k (encrypted 92.9–93.1 k
// → 85.6–86.8 k); a put's 2 values 137.0–137.5 k → 136.1 k (an HSETEX
// costs about two HSETNX). The caller sends at most maxArgs/2 fields,
// which unpack puts on Lua's stack, and no field twice (HSETNX keeps the
// first, HSETEX the last).
func keepFirstLua(key string, from int) string {
	f, k := strconv.Itoa(from), key
	return `
if redis.pcall('HSETEX', ` + k + `, 'FNX', 'FIELDS', (#ARGV - ` + f + ` + 1) / 2, unpack(ARGV, ` + f + `)) ~= 1 then
  for i = ` + f + `, #ARGV, 2 do
    redis.call('HSETNX', ` + k + `, ARGV[i], ARGV[i + 1])
  end
end`
}

// putRecordLua is the part of putScript and putCheckLua that checks the
// parent (refuse, which each defines, makes the reply) and writes the
// checkpoint's record, its parent and head records, its members and the
// thread's index entry; new says whether the thread held no checkpoint.
// On a cluster ARGV[9] is "" when the caller indexed the thread first,
// or a NUL byte (no thread id holds one) when it skipped that because it
// had indexed the thread before: the script then refuses (UNINDEXED,
// before any write) a thread holding no checkpoint and no value, which a
// deletion since may have taken out of the index (a thread holding only
// pending writes is refused too: a retry, never a thread left out).
// On one server the entry is added only when the thread holds no
// checkpoint yet: a thread's first key indexed it (see writesIndexLua),
// and an EXISTS costs less than a ZADD into the index (callgrind,
// BenchmarkLayout: 150.9 k → 147.5 k server instructions per put).
const putRecordLua = `
if ARGV[3] ~= '' and redis.call('HEXISTS', KEYS[2], ARGV[3]) == 0 then return refuse('MISSING') end
local new = redis.call('EXISTS', KEYS[6]) == 0
if ARGV[9] == '\0' and new and redis.call('EXISTS', KEYS[7]) == 0 then return refuse('UNINDEXED') end
local f = ARGV[4]
redis.call('HSET', KEYS[2], f, ARGV[5])
redis.call('HSETNX', KEYS[3], f, ARGV[6])
redis.call('HSET', KEYS[4], f, ARGV[7])
redis.call('ZADD', KEYS[5], 0, f)
redis.call('ZADD', KEYS[6], 0, ARGV[8])
if ARGV[9] ~= '' and ARGV[9] ~= '\0' and new then redis.call('ZADD', KEYS[8], 0, ARGV[9]) end
`

// writesScript is a task's pending writes' own script. KEYS: lock, the
// checkpoints-with-writes set, the checkpoint's writes hash, then on one
// server the thread index, on a cluster the thread's id set and values
// hash, then the fence counter when fenced (the last key). ARGV: token,
// fence value ("" for none), 1 to replace stored writes (HSET) or 0 to
// keep them (HSETNX), the member ns·id, the thread id to add to the
// index (KEYS[4]; "" on a cluster), on a cluster "1" when the caller did
// not index the thread first (it knew it indexed), then a field and a
// record per write. The thread's index entry makes a thread holding only
// pending writes findable (RowThreads): on one server the script adds it
// (writesIndexLua); on a cluster the index is in another slot (see
// driver.putWrites). Replies as batchScript's, and UNINDEXED (nothing
// written) when the caller did not index the thread and it holds nothing.
var writesScript = redis.NewScript(writesScriptSrc(`
  for i = 7, #ARGV, 2 do
    redis.call('HSETNX', KEYS[3], ARGV[i], ARGV[i + 1])
  end`))

// writesScriptFNX is writesScript for a server with HSETEX (Redis 8),
// for two writes or more: writes kept first go in one HSETEX FNX
// (keepFirstLua) instead of one HSETNX each.
var writesScriptFNX = redis.NewScript(writesScriptSrc(keepFirstLua("KEYS[3]", 7)))

// writesScriptSrc is writesScript's source with keep as the writes kept
// first (ARGV[3] "0").
func writesScriptSrc(keep string) string {
	return guardLua + `
local function refuse(r) return r end` + writesIndexLua + `
if ARGV[3] == '1' then
  for i = 7, #ARGV, 1000 do
    redis.call('HSET', KEYS[3], unpack(ARGV, i, math.min(i + 999, #ARGV)))
  end
else` + keep + `
end` + writesTailLua + replyLua
}

// writesTailLua adds the checkpoint to the checkpoints with writes
// (KEYS[2]) on a cluster; on one server writesIndexLua did.
const writesTailLua = `
if ARGV[5] == '' then redis.call('ZADD', KEYS[2], 0, ARGV[4]) end`

// writesIndexLua is the part of writesScript and writesCheckLua that
// keeps the thread findable: on one server (ARGV[5] set) it adds the
// checkpoint to the checkpoints with writes (KEYS[2], which writesTailLua
// then skips) and the thread to the index (KEYS[4]) with the writes,
// atomically, unless the checkpoint was there already: the thread then
// held pending writes, which indexed it: every write of a thread's first
// key indexes it (a put's script, pending writes, Overwrite; older
// versions' threads by indexOlder), and only a deletion of all its keys
// takes it out. (Callgrind, the bench's put_writes on Redis 8: 72 k server
// instructions before the index, 83 k with an unconditional ZADD, 78 k
// with an EXISTS of KEYS[2] deciding; the ZADD's reply deciding saves
// that EXISTS, and costs a ZADD to the index at the first writes of each
// checkpoint rather than of each thread.) On a
// cluster it tells whether the thread held nothing (new: no id set, no
// values, no writes), which the caller indexes again after (a deletion
// may have taken the entry out), and refuses (UNINDEXED, before any write)
// a thread holding nothing when the caller skipped indexing it first
// (ARGV[6] "1": it had indexed it before, and a deletion since may have
// taken it out).
const writesIndexLua = `
local new = false
if ARGV[5] ~= '' then
  if redis.call('ZADD', KEYS[2], 0, ARGV[4]) == 1 then redis.call('ZADD', KEYS[4], 0, ARGV[5]) end
else
  new = redis.call('EXISTS', KEYS[2], KEYS[4], KEYS[5]) == 0
  if new and ARGV[6] == '1' then return refuse('UNINDEXED') end
end
`

// # Large puts and pending writes: the bytes stay out of Lua
//
// A put whose new values hold more than bigPut bytes, or a task's pending
// writes whose records hold more than bigWrites, is one MULTI/EXEC instead: EVAL of a check
// script, then the values or the writes as plain commands (HSETNX, HSET),
// then RENAME hold key and HDEL key "" for the key they go to. Callgrind
// (server instructions per op, Redis 8) put ~12 instructions on every
// byte that enters Lua as an argument (each Lua string is hashed whole as
// it is interned), ~1.2 on a plain command's argument, and ~5 000 on
// every command a MULTI queues: for the bench's put (~2.5 KB) the script
// costs 146 k and the MULTI 150 k (195 k with EVAL), but at ~28 KB of new
// values the script costs 537 k and the MULTI with EVAL 254 k.
//
// A refused check must leave the values or writes unwritten, but MULTI
// runs every queued command. So the check, when it refuses, poisons the
// key they go to (checkGuardLua's refuse): it adds an empty field (so
// that the key exists), renames the key to its hold name (the key and a
// NUL byte: no key of the layout holds one), and sets the key to a
// string; the plain writes after it then fail with WRONGTYPE and store
// nothing, and RENAME hold key and HDEL key "" put the key back as it
// was. When the check passes, that RENAME finds no hold key (an error the
// driver expects) and the HDEL no field. EXEC runs it all without another
// client in between, so no one sees a poisoned key. The check is EVAL,
// not EVALSHA: a script missing from the server's cache (a restart, a
// failover, SCRIPT FLUSH) fails with NOSCRIPT inside MULTI and the plain
// writes after it would run unchecked; EVAL costs hashing the source
// (SHA1, twice: ~45 k instructions for ~900 bytes), which is why small
// writes keep their one EVALSHA.

// bigPut and bigWrites are the sizes (bytes of a put's new values, of a
// task's write records) above which a put or pending writes is a MULTI
// with plain writes rather than one script (see above): where the two
// cost the same server instructions, measured with callgrind on Redis 8
// (a put at ~5.6 KB of values, pending writes at ~3 KB of records).
const (
	bigPut    = 6 << 10
	bigWrites = 3 << 10
)

// checkGuardLua opens the check scripts: refuse (which poisons KEYS[P]
// and returns its reply), then the lock and fence checks as guardLua's.
const checkGuardLua = `
local function refuse(r)
  local k = KEYS[P]
  redis.call('HSETNX', k, '', '')
  redis.call('RENAME', k, k .. '\0')
  redis.call('SET', k, '')
  return r
end
local tok = ARGV[1]
local held = redis.call('GET', KEYS[1])
if tok == '' then
  if held then return refuse('LOCKED') end
elseif held ~= tok then
  return refuse('LOST')
end
if ARGV[2] ~= '' then
  local cur = redis.call('GET', KEYS[#KEYS]) or '0'
  if cur ~= ARGV[2] then return refuse('FENCED:' .. cur) end
end
`

// putCheckLua is a large put's check: putScript without its values,
// which follow as plain HSETNX; it poisons the values hash (KEYS[7]) when
// it refuses. KEYS and ARGV as putScript's, without the values.
var putCheckLua = compactLua(`local P = 7` + checkGuardLua + putRecordLua + `
if new then return 'NEW' end
return 'OK'
`)

// writesCheckLua is a large pending writes' check: writesScript without
// its writes, which follow as plain HSET (replace) or HSETNX (keep); it
// poisons the writes hash (KEYS[3]) when it refuses. KEYS and ARGV as
// writesScript's, without the writes.
var writesCheckLua = compactLua(`local P = 3` + checkGuardLua + writesIndexLua + writesTailLua + replyLua)

// compactLua is src without its indentation and line breaks: EVAL hashes
// the source at every call.
func compactLua(src string) string {
	var b strings.Builder
	for line := range strings.Lines(src) {
		if line = strings.TrimSpace(line); line != "" {
			if b.Len() > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(line)
		}
	}
	return b.String()
}

// renewScript extends a lease held with the token.
var renewScript = redis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0
`)

// releaseScript drops a lease held with the token.
var releaseScript = redis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
`)

// Replies of batchScript.
const (
	replyOK      = "OK"
	replyNew     = "NEW"
	replyLocked  = "LOCKED"
	replyLost    = "LOST"
	replyMissing = "MISSING"
	replyFenced  = "FENCED:"
	// replyUnindexed: pending writes on a cluster, sent without indexing
	// the thread first, found it holding nothing (writesIndexLua).
	replyUnindexed = "UNINDEXED"
)

// maxArgs caps one command's arguments in a batch: Lua's unpack has a
// stack limit (8000 values); longer commands are split.
const maxArgs = 1000

// batch is one batchScript call being built, or a put's or pending
// writes' own script (script), or their check and plain writes (check).
type batch struct {
	// script, when set, runs the batch instead of batchScript, with
	// ARGV args, whose first two (the token and the fence value) argv
	// sets (putScript, writesScript).
	script *redis.Script
	// check, when set, is the source of a check script (putCheckLua,
	// writesCheckLua) run with EVAL in a MULTI/EXEC before writes, with
	// ARGV args as script's; poison is the key it poisons when it
	// refuses, the key of writes.
	check    string
	writes   []write
	poison   string
	args     []any
	fenceKey int    // index in keys, 0 for none
	fenceVal string // the fence token the script must find ("0": none set)
	keys     []string
	kidx     map[string]int
	cmds     []any
	// tk are the thread's keys, which putBatch and writesBatch built: a
	// put and pending writes need them again, and build them once.
	tk keys
}

// write is one plain command of a checked batch: HSETNX field value when
// nx, else HSET field value [field value ...] (fv), on the batch's
// poison key.
type write struct {
	nx    bool
	field string
	value any
	fv    []any
}

// dedicated reports whether b runs a script of its own (script or
// check) rather than batchScript.
func (b *batch) dedicated() bool { return b.script != nil || b.check != "" }

func newBatch(k keys) *batch {
	b := &batch{kidx: map[string]int{}}
	b.key(k.lock)
	b.key(k.byID)
	return b
}

// key is k's index in KEYS (1-based, as Lua's).
func (b *batch) key(k string) int {
	if i, ok := b.kidx[k]; ok {
		return i
	}
	b.keys = append(b.keys, k)
	b.kidx[k] = len(b.keys)
	return len(b.keys)
}

// cmd adds name key args…; args of stride-sized groups (a field and its
// value: 2) are split into several commands when long.
func (b *batch) cmd(name, key string, stride int, args ...any) {
	ki := b.key(key)
	for len(args) > 0 || name == "DEL" {
		n := min(len(args), maxArgs-maxArgs%stride)
		b.cmds = append(b.cmds, name, ki, n)
		b.cmds = append(b.cmds, args[:n]...)
		args = args[n:]
		if name == "DEL" {
			break
		}
	}
}

func (b *batch) empty() bool { return len(b.cmds) == 0 }

// fence makes the batch fail with FENCED unless the fence counter key
// holds v.
func (b *batch) fence(key string, v string) {
	if b.dedicated() {
		// The dedicated scripts find the counter last in KEYS; a retry
		// names the same one (the thread's slot does not change).
		if b.fenceKey == 0 {
			b.keys = append(b.keys, key)
			b.fenceKey = len(b.keys)
		}
		b.fenceVal = v
		return
	}
	b.fenceKey, b.fenceVal = b.key(key), v
}

func (b *batch) argv(token string) []any {
	if b.dedicated() {
		fv := ""
		if b.fenceKey > 0 {
			fv = b.fenceVal
		}
		b.args[0], b.args[1] = token, fv
		return b.args
	}
	// No batch has guards since puts have their own script (putScript
	// checks the parent); batchScript still takes a count of them.
	argv := make([]any, 0, 4+len(b.cmds))
	argv = append(argv, token, b.fenceKey, b.fenceVal, 0)
	return append(argv, b.cmds...)
}

// run is the script that runs b.
func (b *batch) run() *redis.Script {
	if b.script != nil {
		return b.script
	}
	return batchScript
}

// run runs b with token: its reply, or the error of the call.
func (d *driver) run(ctx context.Context, token string, b *batch) (string, error) {
	if b.check != "" {
		return d.runChecked(ctx, token, b)
	}
	r, err := b.run().Run(ctx, d.rdb, b.keys, b.argv(token)...).Text()
	if err != nil {
		return "", err
	}
	return r, nil
}

// runChecked runs a checked batch: MULTI, EVAL of its check, its writes,
// RENAME hold key and HDEL key "" for its poison key (see bigPut),
// EXEC. Its reply is the check's.
func (d *driver) runChecked(ctx context.Context, token string, b *batch) (string, error) {
	var check *redis.Cmd
	var restore *redis.StatusCmd
	writes := make([]redis.Cmder, 0, len(b.writes))
	cmds, err := d.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		check = p.Eval(ctx, b.check, b.keys, b.argv(token)...)
		for _, w := range b.writes {
			if w.nx {
				writes = append(writes, p.HSetNX(ctx, b.poison, w.field, w.value))
			} else {
				writes = append(writes, p.HSet(ctx, b.poison, w.fv...))
			}
		}
		restore = p.Rename(ctx, b.poison+sep, b.poison)
		p.HDel(ctx, b.poison, "")
		return nil
	})
	if check == nil || check.Err() != nil {
		// Nothing ran (a connection error; EXECABORT: a command refused
		// as queued, for memory say) or the check failed as a script.
		return "", firstErr(cmds, err)
	}
	r, _ := check.Val().(string)
	switch r {
	case replyOK, replyNew:
		for _, w := range writes {
			if err := w.Err(); err != nil {
				return "", fmt.Errorf("redis: a write after its check: %w", err)
			}
		}
	default:
		// Refused: the writes failed on the poisoned key, which must be
		// back.
		if err := restore.Err(); err != nil {
			return "", fmt.Errorf("redis: restoring a key after a refused write: %w", err)
		}
	}
	return r, nil
}

// firstErr is the first error of cmds that says why a transaction was
// discarded (a command refused as queued, not EXECABORT), else err.
func firstErr(cmds []redis.Cmder, err error) error {
	for _, c := range cmds {
		if e := c.Err(); e != nil && !strings.HasPrefix(e.Error(), "EXECABORT") {
			return e
		}
	}
	if err == nil {
		err = errors.New("redis: the transaction ran nothing")
	}
	return err
}

// runDirect runs b outside Update: while the thread is locked by an
// Update it waits, polling, until the Update ends (or its lease runs
// out) or ctx ends.
func (d *driver) runDirect(ctx context.Context, b *batch) (string, error) {
	for wait := time.Millisecond; ; wait = min(2*wait, 50*time.Millisecond) {
		r, err := d.run(ctx, "", b)
		if err != nil || r != replyLocked {
			return r, err
		}
		if d.onWait != nil {
			d.onWait()
		}
		if err := sleep(ctx, wait); err != nil {
			return "", err
		}
	}
}

// sleep waits d or until ctx ends (its error then).
func sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err // ended, possibly without a Done channel (noDone)
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// replyErr is the error of a reply other than OK and NEW.
func replyErr(thread, r string) error {
	switch r {
	case replyOK, replyNew:
		return nil
	case replyLost:
		return fmt.Errorf("%w: %s", ErrLockLost, checkpointer.NameID("thread", thread))
	default:
		return fmt.Errorf("redis: unexpected script reply %q", r)
	}
}

// ErrLockLost is wrapped by the error of a change made in an Update whose
// lease on the thread ran out (the Update was stalled longer than
// Options.Lease): nothing of that change was stored.
var ErrLockLost = errors.New("redis: the lease on the thread ran out")

// await runs fn and returns its result, or ctx's error as soon as ctx
// ends. go-redis bounds a command by the context's deadline (with
// ContextTimeoutEnabled) but not by its cancellation: a command waiting
// on a server that does not answer holds on until the client's
// ReadTimeout. The abandoned call finishes in the background; a write
// may still be applied, as any write whose reply is lost. Update does
// not use it: its changes must not outlive it (see tx).
func await[T any](ctx context.Context, fn func(ctx context.Context) (T, error)) (T, error) {
	if ctx.Done() == nil {
		return fn(ctx)
	}
	type result struct {
		v   T
		err error
	}
	ch := make(chan result, 1)
	go func() {
		v, err := fn(ctx)
		ch <- result{v, err}
	}()
	select {
	case r := <-ch:
		return r.v, r.err
	case <-ctx.Done():
		var zero T
		return zero, ctx.Err()
	}
}
