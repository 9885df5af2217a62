package pgaudit_test

import (
	"context"
	"fmt"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/memvault/memvault/audit"
	"github.com/memvault/memvault/audit/audittest"
	"github.com/memvault/memvault/audit/pgaudit"
	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/checkpointer/pgsaver"
	"github.com/memvault/memvault/memvaulttest/pgtest"
)

// BenchmarkAuditedPut puts checkpoints, one in flight, through a pgsaver
// ("plain") and through it audited with the trail in the same schema
// ("audited": each put's record committed by its statement, then
// chained). Beside ns/op it reports what does not depend on the machine's
// load: the client's CPU time and the WAL the server wrote
// (pg_current_wal_insert_lsn), per put, the chaining of every record
// included. The test cluster is the process's own: no other writer adds
// WAL.
func BenchmarkAuditedPut(b *testing.B) {
	for _, mode := range []string{"plain", "audited"} {
		b.Run(mode, func(b *testing.B) {
			ctx := audit.WithPrincipal(context.Background(), "bench")
			pool := pgtest.Pool(b)
			inner, err := pgsaver.New(pool, pgsaver.Options{})
			if err != nil {
				b.Fatal(err)
			}
			if err := inner.Setup(ctx); err != nil {
				b.Fatal(err)
			}
			var s checkpointer.Saver = inner
			var tr *audit.Trail
			if mode == "audited" {
				tb, err := pgaudit.New(pool, pgaudit.Options{})
				if err != nil {
					b.Fatal(err)
				}
				if err := tb.Setup(ctx); err != nil {
					b.Fatal(err)
				}
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
			lsn := func() (n int64) {
				if err := pool.QueryRow(ctx, `SELECT pg_wal_lsn_diff(pg_current_wal_insert_lsn(), '0/0')::bigint`).Scan(&n); err != nil {
					b.Fatal(err)
				}
				return n
			}
			cpu0, wal0 := processCPU(), lsn()
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
			b.ReportMetric(float64(lsn()-wal0)/float64(b.N), "wal-B/op")
		})
	}
}

// processCPU is the process's user and system CPU time so far.
func processCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
