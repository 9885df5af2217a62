package vault

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

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/config"
	"github.com/memvault/memvault/memvaulttest/pgtest"
	"github.com/memvault/memvault/memvaulttest/testkeys"
	"github.com/memvault/memvault/store"
)

// benchGuard measures the erasure guard's cost: a put, a put_writes and a
// store put of a subject's values, with the guard off (as before it) and
// on, side by side in one handle. Besides time it reports the process's
// CPU per op and, on PostgreSQL (one connection), the server backend's.
func benchGuard(b *testing.B, c config.Config) {
	ctx := context.Background()
	c.Keys.Primary = testkeys.Key
	c.Embeddings = "none"
	c.Subjects.ThreadSeparator = ":"
	c.Subjects.NamespacePrefix = []string{"users"}
	h, err := Open(ctx, c)
	if err != nil {
		b.Fatal(err)
	}
	defer h.Close()
	guard := h.Keys.ErasureGuard()
	if guard == nil {
		b.Fatal("no erasure guard")
	}
	backend := 0
	if h.Pool != nil {
		if err := h.Pool.QueryRow(ctx, `SELECT pg_backend_pid()`).Scan(&backend); err != nil {
			b.Fatal(err)
		}
	}
	msg := strings.Repeat("abcdefghijklmnopqrstuvwxyz", 20)[:500]
	ops := map[string]func(i int) error{
		"put": func(i int) error {
			cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(i), ChannelValues: map[string]any{"m": msg}, ChannelVersions: map[string]string{"m": fmt.Sprintf("%032d.0", i+1)}}
			_, err := h.Saver.Put(ctx, checkpointer.Config{ThreadID: "carol:bench"}, cp, nil, cp.ChannelVersions)
			return err
		},
		"put_writes": func(i int) error {
			return h.Saver.PutWrites(ctx, checkpointer.Config{ThreadID: "carol:bench", CheckpointID: checkpointer.NewID(0)},
				[]checkpointer.Write{{Channel: "m", Value: msg}}, fmt.Sprint("task-", i%100), "")
		},
		"store_put": func(i int) error {
			return h.Store.Put(ctx, store.Namespace{"users", "carol", "m"}, fmt.Sprint(i%100), map[string]any{"text": msg}, store.WithoutIndex())
		},
	}
	for _, op := range []string{"put", "put_writes", "store_put"} {
		for _, on := range []bool{false, true} {
			b.Run(fmt.Sprintf("%s/guard=%v", op, on), func(b *testing.B) {
				g := guard
				if !on {
					g = nil
				}
				if err := h.Keys.SetErasureGuard(ctx, g); err != nil {
					b.Fatal(err)
				}
				cpu0, srv0 := processCPU(), backendCPU(backend)
				n := 0
				for i := 0; b.Loop(); i++ {
					if err := ops[op](i); err != nil {
						b.Fatal(err)
					}
					n++
				}
				b.ReportMetric(float64((processCPU()-cpu0).Microseconds())/float64(n), "cpu-µs/op")
				if backend != 0 {
					b.ReportMetric(float64((backendCPU(backend)-srv0).Microseconds())/float64(n), "srv-cpu-µs/op")
				}
			})
		}
	}
}

// processCPU is the CPU time the process has used.
func processCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// backendCPU is the CPU time the PostgreSQL backend pid has used (the
// server on this machine); 0 when it cannot be read.
func backendCPU(pid int) time.Duration {
	if pid == 0 {
		return 0
	}
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	s := string(raw)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	if len(fields) < 13 {
		return 0
	}
	ut, _ := strconv.ParseInt(fields[11], 10, 64)
	st, _ := strconv.ParseInt(fields[12], 10, 64)
	return time.Duration(ut+st) * (time.Second / 100) // USER_HZ
}

func BenchmarkErasureGuardSQLite(b *testing.B) {
	c := config.Default()
	c.DBPath = filepath.Join(b.TempDir(), "b.db")
	benchGuard(b, c)
}

// BenchmarkErasureGuardPostgres runs on one connection, whose backend's CPU
// it reads.
func BenchmarkErasureGuardPostgres(b *testing.B) {
	c := config.Default()
	dsn := pgtest.SchemaDSN(b)
	if strings.Contains(dsn, "://") {
		dsn += "&pool_max_conns=1"
	} else {
		dsn += " pool_max_conns=1"
	}
	c.DSN = dsn
	benchGuard(b, c)
}
