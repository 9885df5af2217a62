package redissaver_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
)

// Session 29's candidates for issue 28 ("stage then promote"): a put's
// bytes go to the server as plain pipelined commands — one SET … PX of
// staging keys in the thread's slot per structure — and ONE small script
// whose arguments are key names and short members only checks the lock,
// the fence and the parent and moves the staged keys into place. A
// script missing from the server's cache (NOSCRIPT after a restart or
// SCRIPT FLUSH) then leaves only expiring staging keys, never unchecked
// data; a refused check deletes them. The layout is session 27's minimal
// one: one string per checkpoint (record, parent, head), one id index,
// one string per value.

// stagedPutLua promotes a staged put. KEYS: 1 lock, 2 staged record,
// 3 record key, 4 parent's record key, 5 id index, 6 thread index, then
// (staged value, value key) pairs, then the fence key when fenced (the
// last). ARGV: token, fence value ("" none), "1" when the parent must
// exist, the id index member, the thread id ("" on a cluster).
// Every check comes before the first write; a refusal deletes the staged
// keys (a DEL is never refused for memory). RENAME keeps the staged
// key's expiry, so each promoted key is PERSISTed; a value stored already
// keeps its first bytes (RENAMENX) and the staged one is deleted.
const stagedPutLua = `
local n = #KEYS
if ARGV[2] ~= '' then n = n - 1 end
local function refuse(r)
  redis.call('DEL', KEYS[2])
  for i = 7, n, 2 do redis.call('DEL', KEYS[i]) end
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
if ARGV[3] ~= '' and redis.call('EXISTS', KEYS[4]) == 0 then return refuse('MISSING') end
local staged = {KEYS[2]}
for i = 7, n, 2 do staged[#staged + 1] = KEYS[i] end
if redis.call('EXISTS', unpack(staged)) ~= #staged then return refuse('UNSTAGED') end
local new = redis.call('EXISTS', KEYS[5]) == 0
redis.call('RENAME', KEYS[2], KEYS[3])
redis.call('PERSIST', KEYS[3])
redis.call('ZADD', KEYS[5], 0, ARGV[4])
if ARGV[5] ~= '' and new then redis.call('ZADD', KEYS[6], 0, ARGV[5]) end
for i = 7, n, 2 do
  if redis.call('RENAMENX', KEYS[i], KEYS[i + 1]) == 1 then
    redis.call('PERSIST', KEYS[i + 1])
  else
    redis.call('DEL', KEYS[i])
  end
end
if new then return 'NEW' end
return 'OK'
`

// stagedMultiPutLua is stagedPutLua for staging keys of fixed names,
// without expiry, written in the same MULTI/EXEC before it: no PERSIST
// (a NOSCRIPT inside the MULTI leaves the staged keys until the thread's
// next put or deletion).
var stagedMultiPutLua = strings.NewReplacer(
	"redis.call('PERSIST', KEYS[3])\n", "",
	"    redis.call('PERSIST', KEYS[i + 1])\n", "",
).Replace(stagedPutLua)

// stagedWritesLua promotes a task's staged pending writes: one hash per
// task (P:w:<ns·id>:<task>, keep-first per task rather than per write:
// RENAMENX), the task in the checkpoint's task set, the checkpoint in
// the writes set. KEYS: 1 lock, 2 staged hash, 3 task's hash, 4 task
// set, 5 writes set, 6 thread index, then the fence key when fenced.
// ARGV: token, fence value, task, ns·id member, thread id ("" none).
const stagedWritesLua = `
local function refuse(r) redis.call('DEL', KEYS[2]) return r end
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
if redis.call('EXISTS', KEYS[2]) == 0 then return refuse('UNSTAGED') end
if ARGV[5] ~= '' and redis.call('EXISTS', KEYS[5]) == 0 then redis.call('ZADD', KEYS[6], 0, ARGV[5]) end
if redis.call('RENAMENX', KEYS[2], KEYS[3]) == 1 then
  redis.call('PERSIST', KEYS[3])
else
  redis.call('DEL', KEYS[2])
end
redis.call('ZADD', KEYS[4], 0, ARGV[3])
redis.call('ZADD', KEYS[5], 0, ARGV[4])
return 'OK'
`

// stagedLibrary is both promotions as a Redis 7 function library
// (FUNCTION LOAD, FCALL): candidate (b).
func stagedLibrary() string {
	body := func(src string) string {
		return "function(KEYS, ARGV)\n" + src + "\nend"
	}
	return "#!lua name=mvstaged\n" +
		"redis.register_function('put', " + body(stagedPutLua) + ")\n" +
		"redis.register_function('writes', " + body(stagedWritesLua) + ")\n"
}

// stager runs the staged candidates on one server: evalsha or fcall.
type stager struct {
	rdb    *redis.Client
	put    *redis.Script
	writes *redis.Script
	fcall  bool
	// multi: the staging and the promotion in one MULTI/EXEC, staging
	// keys of fixed names without expiry (stagedMultiPutLua).
	multi bool
	mput  *redis.Script
	n     int
}

func newStager(ctx context.Context, b *testing.B, rdb *redis.Client, fcall bool) *stager {
	st := &stager{rdb: rdb, put: redis.NewScript(stagedPutLua), writes: redis.NewScript(stagedWritesLua), fcall: fcall}
	if err := st.put.Load(ctx, rdb).Err(); err != nil {
		b.Fatal(err)
	}
	if err := st.writes.Load(ctx, rdb).Err(); err != nil {
		b.Fatal(err)
	}
	st.mput = redis.NewScript(stagedMultiPutLua)
	if st.mput.Hash() == st.put.Hash() {
		b.Fatal("stagedMultiPutLua is stagedPutLua")
	}
	if err := st.mput.Load(ctx, rdb).Err(); err != nil {
		b.Fatal(err)
	}
	if fcall {
		if err := rdb.FunctionLoadReplace(ctx, stagedLibrary()).Err(); err != nil {
			b.Fatal(err)
		}
	}
	return st
}

// promote queues the promotion named fn ("put" or "writes") on p.
func (st *stager) promote(ctx context.Context, p redis.Pipeliner, fn string, keys []string, args ...any) *redis.Cmd {
	if st.fcall {
		return p.FCall(ctx, fn, keys, args...)
	}
	s := st.put
	if fn == "writes" {
		s = st.writes
	} else if st.multi {
		s = st.mput
	}
	return p.EvalSha(ctx, s.Hash(), keys, args...)
}

// stagedTTL bounds how long a staged key outlives a put that never
// promoted it (NOSCRIPT, a client that died between the two).
const stagedTTL = 60_000 // ms

// putStaged runs BenchmarkLayout's put (keys and args of LayoutPut) on
// the staged layout: SET … PX per structure, then the promotion, in one
// pipeline (one round trip).
func (st *stager) putStaged(ctx context.Context, keys []string, args []any) error {
	p := strings.TrimSuffix(keys[0], "lock")
	st.n++
	stage := fmt.Sprintf("%ss:%d:", p, st.n)
	ttl := redis.SetArgs{TTL: stagedTTL * 1e6}
	pipe := st.rdb.Pipelined
	if st.multi {
		stage, ttl, pipe = p+"s:", redis.SetArgs{}, st.rdb.TxPipelined
	}
	f := args[3].(string)
	rec := append(append(append([]byte{}, args[4].([]byte)...), args[6].([]byte)...), args[5].(string)...)
	pk := []string{keys[0], stage + "c", p + "c:" + f, p + "c:" + args[2].(string), p + "i", keys[7]}
	var prom *redis.Cmd
	_, err := pipe(ctx, func(pl redis.Pipeliner) error {
		pl.SetArgs(ctx, stage+"c", rec, ttl)
		for j := 9; j+1 < len(args); j += 2 {
			sk := fmt.Sprintf("%sv%d", stage, j)
			pl.SetArgs(ctx, sk, args[j+1], ttl)
			pk = append(pk, sk, p+"v:"+args[j].(string))
		}
		parent := ""
		if args[2].(string) != "" {
			parent = "1"
		}
		prom = st.promote(ctx, pl, "put", pk, "", "", parent, args[7], args[8])
		return nil
	})
	if err != nil {
		return err
	}
	if r := prom.Val(); r != "OK" && r != "NEW" {
		return fmt.Errorf("staged put: %v", r)
	}
	return nil
}

// writesStaged runs BenchmarkLayoutWrites' pending writes (keys and args
// of LayoutWrites) on the staged layout: HSET of a staging hash and its
// PEXPIRE, then the promotion, in one pipeline.
func (st *stager) writesStaged(ctx context.Context, task string, keys []string, args []any) error {
	p := strings.TrimSuffix(keys[0], "lock")
	st.n++
	stage := fmt.Sprintf("%ss:%d:w", p, st.n)
	member := args[3].(string)
	var prom *redis.Cmd
	_, err := st.rdb.Pipelined(ctx, func(pl redis.Pipeliner) error {
		pl.HSet(ctx, stage, args[6:]...)
		pl.PExpire(ctx, stage, stagedTTL*1e6)
		prom = st.promote(ctx, pl, "writes", []string{keys[0], stage, p + "w:" + member + "\x00" + task, p + "wt:" + member, keys[1], keys[3]},
			"", "", task, member, args[4])
		return nil
	})
	if err != nil {
		return err
	}
	if r := prom.Val(); r != "OK" {
		return fmt.Errorf("staged writes: %v", r)
	}
	return nil
}

// multiCheckLua is candidate (c) on the minimal layout: a tiny check run
// with EVAL (not EVALSHA: a NOSCRIPT inside MULTI would let the writes
// after it run unchecked) first in a MULTI/EXEC whose plain writes follow
// it. A refusal poisons each key the writes go to — the checkpoints hash,
// the id index and the values hash (KEYS 2 to 4; a SET would overwrite
// any type, so records live in a hash field here) — so that they fail
// with WRONGTYPE; the transaction's last commands (RENAME hold key, HDEL
// key "") put them back. KEYS: lock, cp hash, id index, values hash, then
// the fence key when fenced. ARGV: token, fence value. (The empty member
// or field makes each key exist, so that RENAME finds it.)
var multiCheckLua = compactLua(`
local function refuse(r)
  for i = 2, 4 do
    local k = KEYS[i]
    if i == 3 then redis.call('ZADD', k, 'NX', 0, '') else redis.call('HSETNX', k, '', '') end
    redis.call('RENAME', k, k .. '\0')
    redis.call('SET', k, '')
  end
  return r
end
local held = redis.call('GET', KEYS[1])
if ARGV[1] == '' then
  if held then return refuse('LOCKED') end
elseif held ~= ARGV[1] then
  return refuse('LOST')
end
if ARGV[2] ~= '' and (redis.call('GET', KEYS[5]) or '0') ~= ARGV[2] then return refuse('FENCED') end
return 'OK'
`)

// compactLua is the saver's: the source without indentation and line
// breaks (EVAL hashes it at every call).
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

// putMultiCheck runs BenchmarkLayout's put as candidate (c): MULTI, EVAL
// multiCheckLua, HSET of the record (record, head, parent in one field),
// ZADD of the id, HSETNX per value, RENAME per poisonable key and HDEL
// (ZREM for the index) of the empty field, EXEC (one round trip).
func putMultiCheck(ctx context.Context, rdb *redis.Client, keys []string, args []any) error {
	p := strings.TrimSuffix(keys[0], "lock")
	rec := append(append(append([]byte{}, args[4].([]byte)...), args[6].([]byte)...), args[5].(string)...)
	cpk, idk, valk := p+"c", p+"i", keys[6]
	var check *redis.Cmd
	_, err := rdb.TxPipelined(ctx, func(pl redis.Pipeliner) error {
		check = pl.Eval(ctx, multiCheckLua, []string{keys[0], cpk, idk, valk}, "", "")
		pl.HSet(ctx, cpk, args[3], rec)
		pl.ZAdd(ctx, idk, redis.Z{Member: args[7]})
		for j := 9; j+1 < len(args); j += 2 {
			pl.HSetNX(ctx, valk, args[j].(string), args[j+1])
		}
		for _, k := range []string{cpk, idk, valk} {
			pl.Rename(ctx, k+"\x00", k)
		}
		pl.HDel(ctx, cpk, "")
		pl.ZRem(ctx, idk, "")
		pl.HDel(ctx, valk, "")
		return nil
	})
	if check != nil && check.Err() == nil {
		if r, _ := check.Val().(string); r != "OK" {
			return fmt.Errorf("multi check: %v", r)
		}
		return nil // the RENAMEs failed (no hold key): expected
	}
	return err
}

// checkPromoted fails b unless the staged rows left no staging key and
// promoted something: each row's server is its own, so every key on it
// is the row's.
func checkPromoted(ctx context.Context, b *testing.B, rdb *redis.Client, promoted string) {
	staged, err := rdb.Keys(ctx, "*}:s:*").Result()
	if err != nil {
		b.Fatal(err)
	}
	done, err := rdb.Keys(ctx, "*}:"+promoted+"*").Result()
	if err != nil {
		b.Fatal(err)
	}
	if len(staged) > 0 || len(done) == 0 {
		b.Fatalf("staged keys left: %d (want 0); promoted %s keys: %d (want some)", len(staged), promoted, len(done))
	}
}

// putWatched runs BenchmarkLayout's put as candidate (c) without Lua:
// one round trip of WATCH (lock and the id index: a deletion or an
// Update's change touches it; a fenced put would watch the fence key
// too) with GET of the lock, then the minimal layout's writes in
// MULTI/EXEC, which the server refuses whole when a watched key changed
// in between (two round trips). A lock held (or a fence moved) is seen
// in the first reply and nothing is sent.
func putWatched(ctx context.Context, rdb *redis.Client, keys []string, args []any) error {
	p := strings.TrimSuffix(keys[0], "lock")
	rec := append(append(append([]byte{}, args[4].([]byte)...), args[6].([]byte)...), args[5].(string)...)
	idk := p + "i"
	return rdb.Watch(ctx, func(tx *redis.Tx) error {
		var lock *redis.StringCmd
		if _, err := tx.Pipelined(ctx, func(pl redis.Pipeliner) error {
			pl.Do(ctx, "WATCH", keys[0], idk)
			lock = pl.Get(ctx, keys[0])
			return nil
		}); err != nil && err != redis.Nil {
			return err
		}
		if lock.Val() != "" {
			return fmt.Errorf("locked")
		}
		_, err := tx.TxPipelined(ctx, func(pl redis.Pipeliner) error {
			pl.Set(ctx, p+"c:"+args[3].(string), rec, 0)
			pl.ZAdd(ctx, idk, redis.Z{Member: args[7]})
			for j := 9; j+1 < len(args); j += 2 {
				pl.HSetNX(ctx, keys[6], args[j].(string), args[j+1])
			}
			return nil
		})
		return err
	})
}
