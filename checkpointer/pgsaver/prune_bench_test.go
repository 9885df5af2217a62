package pgsaver_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/memvault/memvault/checkpointer"
)

// BenchmarkPruneKeepLatest measures Prune(KeepLatest) of 200 old threads
// of 100 checkpoints each (seedOld's shape: a value per checkpoint, one
// shared, two writes each), all threads in one call and one call per
// thread; each iteration seeds the tables again, untimed. "nothing" is
// one call per thread on threads already pruned (pruned untimed after the
// seeding): a removal that finds nothing to remove. Besides the
// wall time it reports the CPU time of the benchmark process (client-ms)
// and of the PostgreSQL cluster's processes (server-ms) per prune: on a
// loaded machine they compare better than the wall time.
func BenchmarkPruneKeepLatest(b *testing.B) {
	const threads, per = 200, 100
	e := newBenchEnv(b, false)
	ctx := context.Background()
	ids := make([]string, threads)
	for i := range ids {
		ids[i] = fmt.Sprintf("old-%06d", i)
	}
	server := clusterCPU(b, e.pool)
	for _, mode := range []string{"one-call", "per-thread", "nothing"} {
		b.Run(mode, func(b *testing.B) {
			var client, srv time.Duration
			for b.Loop() {
				b.StopTimer()
				seedOld(b, e, threads, per)
				if mode == "nothing" {
					if err := e.s.Prune(ctx, ids, checkpointer.PruneKeepLatest); err != nil {
						b.Fatal(err)
					}
				}
				s0, c0 := server(), processCPU()
				b.StartTimer()
				if mode == "one-call" {
					if err := e.s.Prune(ctx, ids, checkpointer.PruneKeepLatest); err != nil {
						b.Fatal(err)
					}
				} else {
					for _, id := range ids {
						if err := e.s.Prune(ctx, []string{id}, checkpointer.PruneKeepLatest); err != nil {
							b.Fatal(err)
						}
					}
				}
				b.StopTimer()
				client += processCPU() - c0
				srv += server() - s0 // after the client: reading /proc costs the client
				b.StartTimer()
			}
			b.StopTimer()
			b.ReportMetric(float64(client.Milliseconds())/float64(b.N), "client-ms/op")
			b.ReportMetric(float64(srv.Milliseconds())/float64(b.N), "server-ms/op")
			var n int
			if err := e.pool.QueryRow(ctx, `SELECT count(*) FROM checkpoints`).Scan(&n); err != nil || n != threads {
				b.Fatalf("%d checkpoints left (%v), want %d", n, err, threads)
			}
		})
	}
}

// processCPU is the CPU time this process has used.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// clusterCPU returns a function giving the CPU time the processes of
// pool's PostgreSQL cluster (the postmaster and its children) have used,
// read from /proc (0 where it cannot be read: another machine's server).
func clusterCPU(b *testing.B, pool *pgxpool.Pool) func() time.Duration {
	var dir string
	if err := pool.QueryRow(context.Background(), `SHOW data_directory`).Scan(&dir); err != nil {
		b.Logf("no server CPU: %v", err)
		return func() time.Duration { return 0 }
	}
	pidFile, err := os.ReadFile(filepath.Join(dir, "postmaster.pid"))
	if err != nil {
		b.Logf("no server CPU: %v", err)
		return func() time.Duration { return 0 }
	}
	postmaster := strings.SplitN(string(pidFile), "\n", 2)[0]
	return func() time.Duration {
		var ticks int
		procs, _ := filepath.Glob("/proc/[0-9]*/stat")
		for _, p := range procs {
			raw, err := os.ReadFile(p)
			if err != nil {
				continue
			}
			s := string(raw)
			i := strings.LastIndexByte(s, ')')
			if i < 0 {
				continue
			}
			f := strings.Fields(s[i+2:]) // state, ppid, ...; utime, stime are fields 12, 13
			pid := strings.TrimSuffix(strings.TrimPrefix(p, "/proc/"), "/stat")
			if len(f) < 13 || (pid != postmaster && f[1] != postmaster) {
				continue
			}
			u, _ := strconv.Atoi(f[11])
			st, _ := strconv.Atoi(f[12])
			ticks += u + st
		}
		return time.Duration(ticks) * 10 * time.Millisecond // USER_HZ is 100 on Linux
	}
}
