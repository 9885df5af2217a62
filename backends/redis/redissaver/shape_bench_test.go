package redissaver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/memvault/memvault/backends/redis/redissaver"
	"github.com/memvault/memvault/backends/redis/redistest"
	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/memvaulttest/testkeys"
	"github.com/memvault/memvault/serde"
)

// BenchmarkShape runs the put and put_writes of `memvault bench
// checkpointer` (5 channels of ~1 KiB in all, 2 new per put, a run_id in
// the metadata; writes of 3 values) one at a time, plaintext and
// encrypted, so that a CPU profile of this benchmark is the profile of
// those rows' client work; "raw" is the bench's go-redis baseline (a put
// is one JSON document SET and ZADDed in one MULTI/EXEC, a task's writes
// one HSET). Each reports the client's CPU time per op and the server's
// (INFO cpu): run with -count 3 for modes interleaved by rounds.
func BenchmarkShape(b *testing.B) {
	// MEMVAULT_BENCH_TEXT=n repeats the sentence n times (4 by
	// default): larger states.
	rep := 4
	if n, err := strconv.Atoi(os.Getenv("MEMVAULT_BENCH_TEXT")); err == nil && n > 0 {
		rep = n
	}
	text := strings.Repeat("The quick brown fox jumps over the lazy dog. ", rep)
	values := map[string]any{
		"messages": []any{map[string]any{"role": "user", "content": text}, map[string]any{"role": "assistant", "content": text}},
		"context":  map[string]any{"user_id": "u-123", "plan": "premium", "notes": text},
		"summary":  text,
		"step":     int64(7),
		"scratch":  map[string]any{"tool": "lookup", "args": map[string]any{"invoice": "INV-1042"}, "result": text},
	}
	versions := func(i int) map[string]string {
		next := fmt.Sprintf("%032d.%016d", i+1, i)
		first := fmt.Sprintf("%032d.%016d", 1, 0)
		return map[string]string{"messages": next, "scratch": next, "context": first, "summary": first, "step": first}
	}
	// Cancellable, as the CLI bench's (a context that can end makes
	// every call wait for its command in a goroutine: see await).
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rdb := redistest.Shared(b, 8).Client(b)
	b.Run("raw/put", func(b *testing.B) {
		prefix := redistest.Prefix()
		defer clientCPU(b, rdb)()
		for i := 0; b.Loop(); i++ {
			vers := versions(i)
			id := checkpointer.NewID(i)
			doc, err := json.Marshal(map[string]any{"v": 4, "id": id, "ts": time.Now().UTC(), "channel_values": values,
				"channel_versions": vers, "versions_seen": map[string]map[string]string{"agent": vers},
				"updated_channels": []string{"messages", "scratch"}, "parent_checkpoint_id": "",
				"metadata": map[string]any{"source": "loop", "step": i, "run_id": "bench"}})
			if err != nil {
				b.Fatal(err)
			}
			thread := fmt.Sprintf("put-%d", i%64)
			if _, err := rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
				p.Set(ctx, prefix+":{"+thread+"}:cp:"+id, doc, 0)
				p.ZAdd(ctx, prefix+":{"+thread+"}:idx", redis.Z{Member: id})
				return nil
			}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("raw/put_writes", func(b *testing.B) {
		prefix := redistest.Prefix()
		ws := []checkpointer.Write{{Channel: "messages", Value: values["messages"]}, {Channel: "scratch", Value: values["scratch"]},
			{Channel: "summary", Value: values["summary"]}}
		defer clientCPU(b, rdb)()
		for i := 0; b.Loop(); i++ {
			task := fmt.Sprintf("task-%d", i)
			fields := make([]any, 0, 2*len(ws))
			for j, w := range ws {
				v, err := json.Marshal(map[string]any{"channel": w.Channel, "value": w.Value})
				if err != nil {
					b.Fatal(err)
				}
				fields = append(fields, fmt.Sprintf("%s\x00%d", task, j), v)
			}
			key := prefix + ":{" + fmt.Sprintf("w-%d", i%64) + "}:w:1f0c0000-0000-6000-8000-000000000000"
			if err := rdb.HSet(ctx, key, fields...).Err(); err != nil {
				b.Fatal(err)
			}
		}
	})
	// "+goroutine": with Options.ReturnOnCancel.
	for _, mode := range []string{"plaintext", "encrypted", "plaintext+goroutine", "encrypted+goroutine"} {
		var ser serde.Serializer = serde.JSONPlus{}
		if strings.HasPrefix(mode, "encrypted") {
			ser = testkeys.Encrypting(b)
		}
		s := newSaver(b, 8, redissaver.Options{Serde: ser, ReturnOnCancel: strings.HasSuffix(mode, "+goroutine")})
		b.Run(mode+"/put", func(b *testing.B) {
			defer clientCPU(b, rdb)()
			for i := 0; b.Loop(); i++ {
				vers := versions(i)
				cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(i), TS: time.Now().UTC(), ChannelValues: values,
					ChannelVersions: vers, VersionsSeen: map[string]map[string]string{"agent": vers},
					UpdatedChannels: []string{"messages", "scratch"}}
				nv := map[string]string{"messages": vers["messages"], "scratch": vers["scratch"]}
				md := checkpointer.Metadata{"source": "loop", "step": i, "run_id": "bench"}
				if _, err := s.Put(ctx, checkpointer.Config{ThreadID: fmt.Sprintf("put-%d", i%64)}, cp, md, nv); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(mode+"/put_writes", func(b *testing.B) {
			ws := []checkpointer.Write{{Channel: "messages", Value: values["messages"]}, {Channel: "scratch", Value: values["scratch"]},
				{Channel: "summary", Value: values["summary"]}}
			defer clientCPU(b, rdb)()
			for i := 0; b.Loop(); i++ {
				cfg := checkpointer.Config{ThreadID: fmt.Sprintf("w-%d", i%64), CheckpointID: "1f0c0000-0000-6000-8000-000000000000"}
				if err := s.PutWrites(ctx, cfg, ws, fmt.Sprintf("task-%d", i), ""); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// clientCPU returns a func reporting this process's CPU time (user and
// system, every goroutine's, the garbage collector's included) per op
// since the call: the client's cost of an operation, which the server's
// time and the round trip do not disturb; and the server's (INFO cpu:
// its user and system time, every thread's) per op, with rdb.
func clientCPU(b *testing.B, rdb *redis.Client) func() {
	srv := serverCPU(b, rdb)
	// MEMVAULT_BENCH_COMMANDSTATS=dir writes the server's command
	// statistics of each run to dir/<benchmark>.txt.
	dir := os.Getenv("MEMVAULT_BENCH_COMMANDSTATS")
	if rdb != nil && dir != "" {
		if err := rdb.ConfigResetStat(context.Background()).Err(); err != nil {
			b.Fatal(err)
		}
	}
	// MEMVAULT_BENCH_CALLGRIND=dir, with the server run under valgrind's
	// callgrind writing its dumps to dir/cg.<pid>.<n> (MEMVAULT_REDIS8
	// naming a wrapper script that runs `valgrind --tool=callgrind
	// --callgrind-out-file=dir/cg.%p redis-server "$@" --hz 1`), reports
	// the server's user-space instructions per op: a count the machine's
	// load does not disturb.
	cgDir := os.Getenv("MEMVAULT_BENCH_CALLGRIND")
	cg := rdb != nil && cgDir != ""
	var pid string
	if cg {
		pid = serverPID(b, rdb)
		callgrind(b, cgDir, "-z", pid)
	}
	start := cpuNow()
	return func() {
		if cg {
			b.ReportMetric(callgrind(b, cgDir, "-d", pid)/float64(b.N), "server-instr/op")
		}
		if rdb != nil && dir != "" {
			info, err := rdb.Info(context.Background(), "commandstats").Result()
			if err != nil {
				b.Fatal(err)
			}
			name := strings.NewReplacer("/", "_").Replace(b.Name()) + ".txt"
			if err := os.WriteFile(filepath.Join(dir, name), []byte(info), 0o644); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64((cpuNow()-start).Microseconds())/float64(b.N), "cpu-µs/op")
		if rdb != nil {
			b.ReportMetric(float64((serverCPU(b, rdb)-srv).Microseconds())/float64(b.N), "server-cpu-µs/op")
		}
	}
}

// serverPID is the server's process id (INFO server).
func serverPID(b *testing.B, rdb *redis.Client) string {
	info, err := rdb.Info(context.Background(), "server").Result()
	if err != nil {
		b.Fatal(err)
	}
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "process_id:"); ok {
			return v
		}
	}
	b.Fatal("INFO server: no process_id")
	return ""
}

// callgrind runs callgrind_control op on pid: -z zeroes the counts, -d
// dumps them (to dir) and returns the instructions counted since.
func callgrind(b *testing.B, dir, op, pid string) float64 {
	out, err := exec.Command("callgrind_control", op, pid).CombinedOutput()
	if err != nil {
		b.Fatalf("callgrind_control %s %s: %v: %s", op, pid, err, out)
	}
	if op != "-d" {
		return 0
	}
	// The newest dump of pid holds the counts since the zeroing.
	files, _ := filepath.Glob(filepath.Join(dir, "cg."+pid+".*"))
	var newest string
	var mt time.Time
	for _, f := range files {
		if st, err := os.Stat(f); err == nil && st.ModTime().After(mt) {
			newest, mt = f, st.ModTime()
		}
	}
	data, err := os.ReadFile(newest)
	if err != nil {
		b.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "summary: "); ok {
			f, _ := strconv.ParseFloat(strings.Fields(v)[0], 64)
			return f
		}
	}
	b.Fatalf("%s: no summary", newest)
	return 0
}

// serverCPU is the server's CPU time so far (INFO cpu), 0 without rdb.
func serverCPU(b *testing.B, rdb *redis.Client) time.Duration {
	if rdb == nil {
		return 0
	}
	info, err := rdb.Info(context.Background(), "cpu").Result()
	if err != nil {
		b.Fatal(err)
	}
	var t time.Duration
	for _, line := range strings.Split(info, "\n") {
		k, v, _ := strings.Cut(strings.TrimSpace(line), ":")
		if k == "used_cpu_user" || k == "used_cpu_sys" {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				b.Fatalf("INFO cpu %s: %q", k, v)
			}
			t += time.Duration(f * float64(time.Second))
		}
	}
	return t
}

func cpuNow() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
