package sqliteaudit_test

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

	"github.com/memvault/memvault/audit"
	"github.com/memvault/memvault/audit/audittest"
	"github.com/memvault/memvault/audit/sqliteaudit"
	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/checkpointer/sqlitesaver"
)

// BenchmarkAuditedPut puts checkpoints, one in flight, through a
// sqlitesaver ("plain") and through it audited with the trail in the same
// file ("audited": each put's record committed in its transaction, then
// chained). Beside ns/op it reports what does not depend on the machine's
// load: the process's CPU time and the bytes it wrote (WAL, checkpoints of
// it), per put, the chaining of every record included.
func BenchmarkAuditedPut(b *testing.B) {
	for _, mode := range []string{"plain", "audited"} {
		b.Run(mode, func(b *testing.B) {
			ctx := audit.WithPrincipal(context.Background(), "bench")
			path := filepath.Join(b.TempDir(), "data.db")
			inner, err := sqlitesaver.Open(ctx, path, sqlitesaver.Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer inner.Close()
			var s checkpointer.Saver = inner
			var tr *audit.Trail
			if mode == "audited" {
				tb, err := sqliteaudit.Open(ctx, path)
				if err != nil {
					b.Fatal(err)
				}
				defer tb.Close()
				if tr, err = audittest.InTxTrail(tb); err != nil {
					b.Fatal(err)
				}
				s = audit.NewSaver(inner, tr, nil)
			}
			put := func(i int) {
				cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(i), TS: time.Now(),
					ChannelValues: map[string]any{"a": strconv.Itoa(i)}, ChannelVersions: map[string]string{"a": strconv.Itoa(i)}}
				if _, err := s.Put(ctx, checkpointer.Config{ThreadID: fmt.Sprint("t", i%64)}, cp, checkpointer.Metadata{}, map[string]string{"a": strconv.Itoa(i)}); err != nil {
					b.Fatal(err)
				}
			}
			for i := range 200 { // warm up: tables, statement caches
				put(i)
			}
			if tr != nil {
				if err := tr.Flush(ctx); err != nil {
					b.Fatal(err)
				}
			}
			cpu0, w0 := processCPU(), written(b)
			b.ResetTimer()
			for i := range b.N {
				put(200 + i)
			}
			if tr != nil {
				if err := tr.Flush(ctx); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			b.ReportMetric(float64((processCPU()-cpu0).Microseconds())/float64(b.N), "cpu-µs/op")
			b.ReportMetric(float64(written(b)-w0)/float64(b.N), "written-B/op")
		})
	}
}

// processCPU is the process's user and system CPU time so far.
func processCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// written is the bytes the process passed to write calls so far
// (/proc/self/io wchar).
func written(b *testing.B) int64 {
	data, err := os.ReadFile("/proc/self/io")
	if err != nil {
		b.Skip("no /proc/self/io")
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "wchar: "); ok {
			n, _ := strconv.ParseInt(v, 10, 64)
			return n
		}
	}
	b.Skip("no wchar in /proc/self/io")
	return 0
}
