package redissaver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/memvault/memvault/backends/redis/redissaver"
	"github.com/memvault/memvault/backends/redis/redistest"
	"github.com/memvault/memvault/checkpointer"
)

// writesOnlyLua is putScript's writes without its checks (lock, fence,
// parent): what the script form costs for the writes alone.
var writesOnlyLua = redis.NewScript(`
local f = ARGV[4]
redis.call('HSET', KEYS[2], f, ARGV[5])
redis.call('HSETNX', KEYS[3], f, ARGV[6])
redis.call('HSET', KEYS[4], f, ARGV[7])
redis.call('ZADD', KEYS[5], 0, f)
redis.call('ZADD', KEYS[6], 0, ARGV[8])
redis.call('ZADD', KEYS[8], 0, ARGV[9])
for i = 10, #ARGV, 2 do
  redis.call('HSETNX', KEYS[7], ARGV[i], ARGV[i + 1])
end
return 'OK'
`)

// minimalLua is a put on a minimal layout (minimal below) with
// putScript's checks (lock, fence, parent): the Lua form of the fewest
// structures a put needs.
var minimalLua = redis.NewScript(`
local held = redis.call('GET', KEYS[1])
if ARGV[1] == '' then
  if held then return 'LOCKED' end
elseif held ~= ARGV[1] then
  return 'LOST'
end
if ARGV[2] ~= '' then
  local cur = redis.call('GET', KEYS[#KEYS]) or '0'
  if cur ~= ARGV[2] then return 'FENCED:' .. cur end
end
if ARGV[3] ~= '' and redis.call('EXISTS', KEYS[2] .. ARGV[3]) == 0 then return 'MISSING' end
redis.call('SET', KEYS[2], ARGV[5])
redis.call('ZADD', KEYS[6], 0, ARGV[8])
for i = 10, #ARGV, 2 do
  redis.call('HSETNX', KEYS[7], ARGV[i], ARGV[i + 1])
end
return 'OK'
`)

// lockOnlyLua reads the lock and nothing else: the cost of a script
// call itself.
var lockOnlyLua = redis.NewScript(`if redis.call('GET', KEYS[1]) then return 'LOCKED' end return 'OK'`)

// BenchmarkLayout attributes a put's server cost (issue 28): the same
// put — the bench's five channels, two new values, BenchmarkShape's
// sizes — through the same keys and bytes, in each way below, reporting the
// server's instructions per put under callgrind
// (MEMVAULT_BENCH_CALLGRIND, see clientCPU) and round trips:
//
//   - script: memvault's put (putScript: lock, fence and parent checks,
//     then the 8 writes), 1 round trip;
//   - lua-writes: the same 8 writes in a script with no check;
//   - multi: the same 8 writes as plain commands in MULTI/EXEC, no check;
//   - pipeline: the same 8 writes pipelined, no MULTI, no check;
//   - watch: the checks without Lua: WATCH lock and parent, GET lock and
//     HEXISTS parent in a first round trip, then the 8 writes in
//     MULTI/EXEC (2 round trips);
//   - minimal: a layout of 3 structures, plain and pipelined — the
//     checkpoint's record, parent and head in one string key of its own,
//     one id index, the values hash (no namespace index, no thread
//     index); minimal-lua: the same with putScript's checks in a script;
//   - minimal+lua-lock: minimal and, in the same pipeline, a script
//     reading the lock alone — neither atomic nor a candidate: the floor
//     of any design that checks in Lua;
//   - staged-evalsha, staged-fcall, staged-multi: session 29's "stage
//     then promote" (layout_staged_bench_test.go): the bytes in plain
//     SET … PX of staging keys, then one keys-only script (EVALSHA, or
//     FCALL of a function library) checking and RENAMEing them into
//     place; staged-multi: fixed staging names, no expiry, all in one
//     MULTI/EXEC;
//   - minimal-multi-check: the minimal layout's plain writes after a
//     tiny EVAL check in one MULTI/EXEC, poisoning the keys on refusal
//     as the saver's large-write path does;
//   - minimal-watch: the check without Lua: WATCH and GET of the lock in
//     one round trip, then the minimal layout's writes in MULTI/EXEC.
//
// BenchmarkShape's raw put (a JSON document SET and ZADDed in MULTI/EXEC)
// is the baseline the issue compares with.
func BenchmarkLayout(b *testing.B) {
	ctx := context.Background()
	text := "The quick brown fox jumps over the lazy dog. The quick brown fox jumps over the lazy dog. " +
		"The quick brown fox jumps over the lazy dog. The quick brown fox jumps over the lazy dog. "
	values := map[string]any{
		"messages": []any{map[string]any{"role": "user", "content": text}, map[string]any{"role": "assistant", "content": text}},
		"context":  map[string]any{"user_id": "u-123", "plan": "premium", "notes": text},
		"summary":  text,
		"step":     int64(7),
		"scratch":  map[string]any{"tool": "lookup", "args": map[string]any{"invoice": "INV-1042"}, "result": text},
	}
	rows := func(s *redissaver.Saver, i int) *checkpointer.PutRows {
		next := fmt.Sprintf("%032d.%016d", i+1, i)
		first := fmt.Sprintf("%032d.%016d", 1, 0)
		vers := map[string]string{"messages": next, "scratch": next, "context": first, "summary": first, "step": first}
		id := checkpointer.NewID(i)
		doc, err := json.Marshal(map[string]any{"v": 4, "id": id, "ts": time.Now().UTC(), "channel_values": map[string]any{},
			"channel_versions": vers, "versions_seen": map[string]map[string]string{"agent": vers},
			"updated_channels": []string{"messages", "scratch"}})
		if err != nil {
			b.Fatal(err)
		}
		meta, _ := json.Marshal(map[string]any{"source": "loop", "step": i, "run_id": "bench"})
		p := &checkpointer.PutRows{Thread: fmt.Sprintf("put-%d", i%64), ID: id, V: 4, Doc: doc, Meta: meta, Versions: vers}
		for _, ch := range []string{"messages", "scratch"} {
			data, _ := json.Marshal(values[ch])
			p.Values = append(p.Values, checkpointer.ValueRow{Channel: ch, Version: next, Type: "json", Data: data})
		}
		return p
	}
	// plain queues the 8 writes of keys and args on p.
	plain := func(p redis.Pipeliner, keys []string, args []any) {
		f := args[3]
		p.HSet(ctx, keys[1], f, args[4])
		p.HSetNX(ctx, keys[2], f.(string), args[5])
		p.HSet(ctx, keys[3], f, args[6])
		p.ZAdd(ctx, keys[4], redis.Z{Member: f})
		p.ZAdd(ctx, keys[5], redis.Z{Member: args[7]})
		p.ZAdd(ctx, keys[7], redis.Z{Member: args[8]})
		for j := 9; j+1 < len(args); j += 2 {
			p.HSetNX(ctx, keys[6], args[j].(string), args[j+1])
		}
	}
	// ungated: putScript adding the thread to the index at every put, as
	// before it checked whether the thread held a checkpoint already.
	ungated := redis.NewScript(strings.Replace(strings.Replace(redissaver.PutScriptSource,
		"if ARGV[9] ~= '' and new then", "if ARGV[9] ~= '' then", 1),
		"local new = redis.call('EXISTS', KEYS[6]) == 0", "local new = false\nif ARGV[9] == '' then new = redis.call('EXISTS', KEYS[6]) == 0 end", 1))
	if ungated.Hash() == redis.NewScript(redissaver.PutScriptSource).Hash() {
		b.Fatal("the ungated variant is putScript")
	}
	// minimal queues a put on the minimal layout on p.
	minimal := func(p redis.Pipeliner, keys []string, args []any) {
		rec := append(append(append([]byte{}, args[4].([]byte)...), args[6].([]byte)...), args[5].(string)...)
		p.Set(ctx, keys[1]+args[3].(string), rec, 0)
		p.ZAdd(ctx, keys[5], redis.Z{Member: args[7]})
		for j := 9; j+1 < len(args); j += 2 {
			p.HSetNX(ctx, keys[6], args[j].(string), args[j+1])
		}
	}
	for _, mode := range []string{"script", "script-ungated", "lua-writes", "multi", "pipeline", "watch", "minimal", "minimal-lua",
		"staged-evalsha", "staged-fcall", "staged-multi", "minimal+lua-lock", "minimal-multi-check", "minimal-watch"} {
		// A server of its own per row: the rows' counts do not depend
		// on what the rows before left on the server.
		srv := redistest.StartT(b, redistest.Options{Version: 8})
		rdb := srv.Client(b)
		s, err := redissaver.New(rdb, redissaver.Options{Prefix: redistest.Prefix()})
		if err != nil {
			b.Fatal(err)
		}
		var st *stager
		if strings.HasPrefix(mode, "staged-") {
			st = newStager(ctx, b, rdb, mode == "staged-fcall")
			st.multi = mode == "staged-multi"
		}
		if err := lockOnlyLua.Load(ctx, rdb).Err(); err != nil {
			b.Fatal(err)
		}
		ran := false // a row the -bench filter skipped promoted nothing
		b.Run(mode+"/put", func(b *testing.B) {
			ran = true
			defer clientCPU(b, rdb)()
			rt := 0
			for i := 0; b.Loop(); i++ {
				keys, args, run := redissaver.LayoutPut(s, rows(s, i))
				if i == 0 && mode == "script" {
					var sizes []int
					for _, a := range args {
						switch v := a.(type) {
						case string:
							sizes = append(sizes, len(v))
						case []byte:
							sizes = append(sizes, len(v))
						}
					}
					b.Logf("argument sizes %v", sizes)
				}
				var err error
				switch mode {
				case "script":
					err = run(ctx)
					rt++
				case "script-ungated":
					err = ungated.Run(ctx, rdb, keys, args...).Err()
					rt++
				case "lua-writes":
					err = writesOnlyLua.Run(ctx, rdb, keys, args...).Err()
					rt++
				case "multi":
					_, err = rdb.TxPipelined(ctx, func(p redis.Pipeliner) error { plain(p, keys, args); return nil })
					rt++
				case "pipeline":
					_, err = rdb.Pipelined(ctx, func(p redis.Pipeliner) error { plain(p, keys, args); return nil })
					rt++
				case "minimal":
					_, err = rdb.Pipelined(ctx, func(p redis.Pipeliner) error { minimal(p, keys, args); return nil })
					rt++
				case "minimal+lua-lock":
					// The floor of any design checking in Lua: the
					// minimal layout's plain writes and, in the same
					// pipeline, a script reading the lock alone (no
					// atomicity: a lower bound, not a candidate).
					_, err = rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
						minimal(p, keys, args)
						p.EvalSha(ctx, lockOnlyLua.Hash(), keys[:1])
						return nil
					})
					rt++
				case "minimal-watch":
					err = putWatched(ctx, rdb, keys, args)
					rt += 2
				case "minimal-multi-check":
					err = putMultiCheck(ctx, rdb, keys, args)
					rt++
				case "staged-evalsha", "staged-fcall", "staged-multi":
					err = st.putStaged(ctx, keys, args)
					rt++
				case "minimal-lua":
					rec := append(append(append([]byte{}, args[4].([]byte)...), args[6].([]byte)...), args[5].(string)...)
					margs := append([]any{}, args...)
					margs[4] = rec
					mkeys := append([]string{}, keys...)
					mkeys[1] = keys[1] + args[3].(string)
					err = minimalLua.Run(ctx, rdb, mkeys, margs...).Err()
					rt++
				case "watch":
					err = rdb.Watch(ctx, func(tx *redis.Tx) error {
						var lock *redis.StringCmd
						if _, err := tx.Pipelined(ctx, func(p redis.Pipeliner) error {
							lock = p.Get(ctx, keys[0])
							return nil
						}); err != nil && err != redis.Nil {
							return err
						}
						if lock.Val() != "" {
							return fmt.Errorf("locked")
						}
						_, err := tx.TxPipelined(ctx, func(p redis.Pipeliner) error { plain(p, keys, args); return nil })
						return err
					}, keys[0])
					rt += 3 // WATCH, GET, MULTI/EXEC (go-redis sends WATCH alone)
				}
				if err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(rt)/float64(b.N), "round-trips/op")
		})
		if ran && st != nil {
			checkPromoted(ctx, b, rdb, "v:")
		}
		_ = s.Close()
		srv.Stop()
	}
}

// BenchmarkLayoutWrites is BenchmarkLayout for a task's pending writes
// (BenchmarkShape's: 3 writes): script (memvault's writesScript), multi
// and pipeline (its writes — HSETNX per write, the ZADD of the writes
// set, the EXISTS that gates the thread index — as plain commands, no
// check); staged-evalsha and staged-fcall: the writes staged in one
// hash per task and promoted by a keys-only script (stagedWritesLua);
// pipeline+lua-lock: pipeline and a script reading the lock alone, the
// floor of a check in Lua (not atomic). BenchmarkShape's raw put_writes
// (one HSET) is the baseline.
func BenchmarkLayoutWrites(b *testing.B) {
	ctx := context.Background()
	text := strings.Repeat("The quick brown fox jumps over the lazy dog. ", 4)
	vals := []any{[]any{map[string]any{"role": "user", "content": text}, map[string]any{"role": "assistant", "content": text}},
		map[string]any{"tool": "lookup", "args": map[string]any{"invoice": "INV-1042"}, "result": text}, text}
	rows := func(i int) *checkpointer.WriteRows {
		w := &checkpointer.WriteRows{Thread: fmt.Sprintf("w-%d", i%64), Checkpoint: "1f0c0000-0000-6000-8000-000000000000", Task: fmt.Sprintf("task-%d", i)}
		for j, v := range vals {
			data, _ := json.Marshal(v)
			w.Rows = append(w.Rows, checkpointer.WriteRow{Task: w.Task, Idx: j, Channel: []string{"messages", "scratch", "summary"}[j], Type: "json", Data: data})
		}
		return w
	}
	plain := func(p redis.Pipeliner, keys []string, args []any) {
		p.Exists(ctx, keys[1])
		for j := 6; j+1 < len(args); j += 2 {
			p.HSetNX(ctx, keys[2], args[j].(string), args[j+1])
		}
		p.ZAdd(ctx, keys[1], redis.Z{Member: args[3]})
	}
	for _, mode := range []string{"script", "multi", "pipeline", "staged-evalsha", "staged-fcall", "pipeline+lua-lock"} {
		srv := redistest.StartT(b, redistest.Options{Version: 8})
		rdb := srv.Client(b)
		s, err := redissaver.New(rdb, redissaver.Options{Prefix: redistest.Prefix()})
		if err != nil {
			b.Fatal(err)
		}
		var st *stager
		if strings.HasPrefix(mode, "staged-") {
			st = newStager(ctx, b, rdb, mode == "staged-fcall")
		}
		if err := lockOnlyLua.Load(ctx, rdb).Err(); err != nil {
			b.Fatal(err)
		}
		ran := false // a row the -bench filter skipped promoted nothing
		b.Run(mode+"/put_writes", func(b *testing.B) {
			ran = true
			defer clientCPU(b, rdb)()
			for i := 0; b.Loop(); i++ {
				w := rows(i)
				keys, args, run := redissaver.LayoutWrites(s, w)
				var err error
				switch mode {
				case "script":
					err = run(ctx)
				case "multi":
					_, err = rdb.TxPipelined(ctx, func(p redis.Pipeliner) error { plain(p, keys, args); return nil })
				case "pipeline":
					_, err = rdb.Pipelined(ctx, func(p redis.Pipeliner) error { plain(p, keys, args); return nil })
				case "staged-evalsha", "staged-fcall":
					err = st.writesStaged(ctx, w.Task, keys, args)
				case "pipeline+lua-lock":
					// The floor, as BenchmarkLayout's minimal+lua-lock.
					_, err = rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
						plain(p, keys, args)
						p.EvalSha(ctx, lockOnlyLua.Hash(), keys[:1])
						return nil
					})
				}
				if err != nil {
					b.Fatal(err)
				}
			}
		})
		if ran && st != nil {
			checkPromoted(ctx, b, rdb, "w:")
		}
		_ = s.Close()
		srv.Stop()
	}
}
