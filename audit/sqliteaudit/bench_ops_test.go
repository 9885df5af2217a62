package sqliteaudit_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/memvault/memvault/audit"
	"github.com/memvault/memvault/audit/audittest"
	"github.com/memvault/memvault/audit/sqliteaudit"
	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/checkpointer/sqlitesaver"
)

// BenchmarkAuditedOps runs put, put_writes, get_tuple, get_tuple_id (a
// checkpoint by id) and list10 (a thread's ten checkpoints) at 1 and 16 in
// flight through a sqlitesaver ("plain") and through it audited with the
// trail in the same file ("audited"), and reports per operation the
// process's CPU time (SQLite's work included: it runs in the process)
// and the bytes it wrote, the chaining of every record included (the
// trail is flushed before the counters are read). Compare the modes side
// by side in one run: -bench 'AuditedOps/get_tuple' -count 5.
//
// The saver reads the file without SQLite's memory map, as a vault's does
// (sqlitesaver.Options.NoMmap); MEMVAULT_BENCH_MMAP=1 keeps the 64 MiB
// map of a saver opened alone. With the map, every read transaction that
// follows a write (an audited read's record is one) unmaps the window
// first, which unaudited reads, with no write between them, never pay:
// list10 at 16 in flight cost ~770 µs audited against ~460 µs unmapped
// (unaudited ~330 either way).
func BenchmarkAuditedOps(b *testing.B) {
	for _, op := range []string{"put", "put_writes", "get_tuple", "get_tuple_id", "list10"} {
		for _, conc := range []int{1, 16} {
			for _, mode := range []string{"plain", "audited"} {
				b.Run(fmt.Sprintf("%s/c=%d/%s", op, conc, mode), func(b *testing.B) { benchAuditedOp(b, op, conc, mode) })
			}
		}
	}
}

func benchAuditedOp(b *testing.B, op string, conc int, mode string) {
	ctx := audit.WithPrincipal(context.Background(), "bench")
	path := filepath.Join(b.TempDir(), "data.db")
	inner, err := sqlitesaver.Open(ctx, path, sqlitesaver.Options{NoMmap: os.Getenv("MEMVAULT_BENCH_MMAP") == ""})
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
	ckpt := checkpointer.NewID(1)
	var fifth string // the id get_tuple_id reads
	value := strings.Repeat("x", 200)
	run := func(i int) error {
		thread := fmt.Sprint("t", i%64)
		switch op {
		case "put":
			v := strconv.Itoa(i)
			cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(i), TS: time.Now(),
				ChannelValues: map[string]any{"a": value + v}, ChannelVersions: map[string]string{"a": v}}
			_, err := s.Put(ctx, checkpointer.Config{ThreadID: thread}, cp, checkpointer.Metadata{"step": i}, map[string]string{"a": v})
			return err
		case "put_writes":
			ws := []checkpointer.Write{{Channel: "a", Value: value}, {Channel: "b", Value: value}, {Channel: "c", Value: value}}
			return s.PutWrites(ctx, checkpointer.Config{ThreadID: thread, CheckpointID: ckpt}, ws, fmt.Sprint("task-", i), "")
		case "list10":
			n := 0
			for t, err := range s.List(ctx, &checkpointer.Config{ThreadID: "read"}, checkpointer.ListOptions{Limit: 10}) {
				if err != nil {
					return err
				}
				if t != nil {
					n++
				}
			}
			if n != 10 {
				return fmt.Errorf("listed %d tuples, want 10", n)
			}
			return nil
		default:
			cfg := checkpointer.Config{ThreadID: "read"}
			if op == "get_tuple_id" {
				cfg.CheckpointID = fifth
			}
			t, err := s.GetTuple(ctx, cfg)
			if err == nil && t == nil {
				err = fmt.Errorf("no tuple")
			}
			return err
		}
	}
	if op == "get_tuple" || op == "get_tuple_id" || op == "list10" {
		// Ten checkpoints of one thread: get_tuple reads the latest,
		// get_tuple_id the fifth, list10 all of them.
		for i := 1; i <= 10; i++ {
			v := strconv.Itoa(i)
			cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(i), TS: time.Now(),
				ChannelValues: map[string]any{"a": value}, ChannelVersions: map[string]string{"a": v}}
			if i == 5 {
				fifth = cp.ID
			}
			if _, err := inner.Put(ctx, checkpointer.Config{ThreadID: "read"}, cp, checkpointer.Metadata{}, map[string]string{"a": v}); err != nil {
				b.Fatal(err)
			}
		}
	}
	for i := range 200 { // warm up: tables, statement caches
		if err := run(i); err != nil {
			b.Fatal(err)
		}
	}
	flush := func() {
		if tr != nil {
			if err := tr.Flush(ctx); err != nil {
				b.Fatal(err)
			}
		}
	}
	flush()
	cpu0, w0 := processCPU(), written(b)
	b.ResetTimer()
	var next atomic.Int64
	var wg sync.WaitGroup
	for range conc {
		wg.Go(func() {
			for {
				i := next.Add(1)
				if i > int64(b.N) {
					return
				}
				if err := run(200 + int(i)); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	flush()
	b.StopTimer()
	n := float64(b.N)
	b.ReportMetric(float64((processCPU()-cpu0).Microseconds())/n, "cpu-µs/op")
	b.ReportMetric(float64(written(b)-w0)/n, "written-B/op")
}
