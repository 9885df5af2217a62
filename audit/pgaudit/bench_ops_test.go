package pgaudit_test

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

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/memvault/memvault/audit"
	"github.com/memvault/memvault/audit/audittest"
	"github.com/memvault/memvault/audit/pgaudit"
	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/checkpointer/pgsaver"
	"github.com/memvault/memvault/memvaulttest/pgtest"
)

// BenchmarkAuditedOps runs put, put_writes, get_tuple, get_tuple_id (a
// checkpoint by id) and list10 (a thread's ten checkpoints) at 1 and 16 in
// flight through a pgsaver ("plain") and through it audited with the
// trail in the same schema ("audited"), and reports per operation what
// does not depend on the machine's load: client CPU, server CPU (the
// cluster's processes, read from /proc: only with TEST_DATABASE_URL
// naming a cluster on this machine that nothing else uses), write
// transactions (xids), statements (pg_stat_statements, when installed)
// and WAL bytes. The trail is flushed before the counters are read, so a
// record's chaining is counted with its operation. Compare the modes side
// by side in one run: -bench 'AuditedOps/put_writes' -count 5.
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
	pool := pgtest.Pool(b)
	if op == "list10" {
		// A listing holds its connection while it waits for its record,
		// whose INSERT needs one too: with as many listings in flight as
		// the pool has connections (4 by default here), a memvault before
		// session 26 deadlocked (TestAuditedListsPoolSize). A pool larger
		// than the listings in flight lets old and new binaries be
		// measured alike.
		cfg, err := pgxpool.ParseConfig(pgtest.SchemaDSN(b))
		if err != nil {
			b.Fatal(err)
		}
		cfg.MaxConns = int32(conc) + 4
		if pool, err = pgxpool.NewWithConfig(context.Background(), cfg); err != nil {
			b.Fatal(err)
		}
		defer pool.Close()
	}
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
	c0, cpu0 := readServer(b, pool), processCPU()
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
	cpu := processCPU() - cpu0
	c1 := readServer(b, pool)
	n := float64(b.N)
	b.ReportMetric(float64(cpu.Microseconds())/n, "cpu-µs/op")
	if c0.cpu > 0 {
		b.ReportMetric(float64((c1.cpu-c0.cpu).Microseconds())/n, "srv-µs/op")
	}
	b.ReportMetric(float64(c1.xids-c0.xids-1)/n, "xacts/op") // -1: readServer's own xid
	if c0.statements >= 0 {
		b.ReportMetric(float64(c1.statements-c0.statements-3)/n, "stmts/op") // -3: readServer's own
	}
	b.ReportMetric(float64(c1.wal-c0.wal)/n, "wal-B/op")
}

// serverCounters are the cluster's cumulative counters readServer reads.
type serverCounters struct {
	cpu        time.Duration
	statements int64 // -1: pg_stat_statements is not installed
	xids       int64
	wal        int64
}

func readServer(b *testing.B, pool *pgxpool.Pool) serverCounters {
	ctx := context.Background()
	var c serverCounters
	var dir string
	if err := pool.QueryRow(ctx, `SELECT current_setting('data_directory', true)`).Scan(&dir); err == nil && dir != "" {
		c.cpu = clusterCPU(dir)
	}
	if err := pool.QueryRow(ctx, `SELECT coalesce((SELECT sum(calls)::bigint FROM public.pg_stat_statements), -1)`).Scan(&c.statements); err != nil {
		c.statements = -1
	}
	if err := pool.QueryRow(ctx, `SELECT txid_current()::bigint, (pg_current_wal_insert_lsn() - '0/0'::pg_lsn)::bigint`).Scan(&c.xids, &c.wal); err != nil {
		b.Fatal(err)
	}
	return c
}

// clusterCPU is the CPU time (user + system) of the postmaster whose
// data directory is dir and of its children, 0 when /proc cannot tell.
func clusterCPU(dir string) time.Duration {
	pidFile, err := os.ReadFile(filepath.Join(dir, "postmaster.pid"))
	if err != nil {
		return 0
	}
	master := strings.SplitN(string(pidFile), "\n", 2)[0]
	procs, _ := filepath.Glob("/proc/[0-9]*/stat")
	var ticks int64
	for _, p := range procs {
		st, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		// Fields after the command's closing parenthesis: state (3),
		// ppid (4) … utime (14), stime (15).
		end := strings.LastIndexByte(string(st), ')')
		if end < 0 {
			continue
		}
		f := strings.Fields(string(st[end+1:]))
		if len(f) < 13 {
			continue
		}
		pid := strings.TrimSuffix(strings.TrimPrefix(p, "/proc/"), "/stat")
		if pid != master && f[1] != master {
			continue
		}
		u, _ := strconv.ParseInt(f[11], 10, 64)
		s, _ := strconv.ParseInt(f[12], 10, 64)
		ticks += u + s
	}
	return time.Duration(ticks) * (time.Second / 100) // USER_HZ
}
