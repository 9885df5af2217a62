package pgsaver_test

import (
	"context"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/checkpointer/checkpointertest"
)

// sweepBenchSize is the old data BenchmarkPutDuringSweep sweeps: threads
// of 100 checkpoints, 20 000 checkpoints in all unless
// MEMVAULT_BENCH_SWEEP_CHECKPOINTS says otherwise (1000000 for the scale
// run: 10 000 threads).
func sweepBenchSize(b *testing.B) (threads, perThread int) {
	perThread, total := 100, 20000
	if v := os.Getenv("MEMVAULT_BENCH_SWEEP_CHECKPOINTS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < perThread {
			b.Fatalf("MEMVAULT_BENCH_SWEEP_CHECKPOINTS=%q: want an integer >= %d", v, perThread)
		}
		total = n
	}
	return total / perThread, perThread
}

// seedOld fills the tables, by three set-based statements, with threads
// of old checkpoints shaped like the put workload's: a "messages" value
// (~500 bytes) per checkpoint, a "base" value the first wrote and all
// reference, and two pending writes each.
func seedOld(b *testing.B, e *benchEnv, threads, per int) {
	b.Helper()
	ctx := context.Background()
	prefix := checkpointer.IDFloor(time.Now().Add(-90 * 24 * time.Hour))[:19]
	for _, q := range []string{
		`TRUNCATE checkpoints, checkpoint_blobs, checkpoint_writes`,
		`INSERT INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, checkpoint, metadata)
		SELECT 'old-' || lpad(t::text, 6, '0'), '', $1::text || lpad(to_hex(i), 4, '0') || '-' || lpad(to_hex(t), 12, '0'),
			CASE WHEN i > 0 THEN $1::text || lpad(to_hex(i - 1), 4, '0') || '-' || lpad(to_hex(t), 12, '0') END,
			jsonb_build_object('v', 4, 'id', $1::text || lpad(to_hex(i), 4, '0') || '-' || lpad(to_hex(t), 12, '0'),
				'ts', '2025-01-01T00:00:00+00:00', 'channel_values', '{}'::jsonb,
				'channel_versions', jsonb_build_object('messages', lpad((i + 1)::text, 32, '0') || '.0', 'base', lpad('1', 32, '0') || '.0'),
				'versions_seen', '{}'::jsonb, 'updated_channels', '[]'::jsonb),
			'{"source": "loop"}'::jsonb
		FROM generate_series(0, $2::int - 1) t, generate_series(0, $3::int - 1) i`,
		`INSERT INTO checkpoint_blobs (thread_id, checkpoint_ns, channel, version, type, blob)
		SELECT 'old-' || lpad(t::text, 6, '0'), '', 'messages', lpad((i + 1)::text, 32, '0') || '.0', 'json',
			convert_to('"' || repeat('m', 500) || '"', 'UTF8')
		FROM generate_series(0, $2::int - 1) t, generate_series(0, $3::int - 1) i
		UNION ALL
		SELECT 'old-' || lpad(t::text, 6, '0'), '', 'base', lpad('1', 32, '0') || '.0', 'json', convert_to('"base"', 'UTF8')
		FROM generate_series(0, $2::int - 1) t WHERE $1::text IS NOT NULL`,
		`INSERT INTO checkpoint_writes (thread_id, checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, blob)
		SELECT 'old-' || lpad(t::text, 6, '0'), '', $1::text || lpad(to_hex(i), 4, '0') || '-' || lpad(to_hex(t), 12, '0'),
			'task-1', '', w, 'messages', 'json', convert_to('"write"', 'UTF8')
		FROM generate_series(0, $2::int - 1) t, generate_series(0, $3::int - 1) i, generate_series(0, 1) w`,
		`ANALYZE checkpoints, checkpoint_blobs, checkpoint_writes`,
	} {
		var args []any
		if q[0] == 'I' {
			args = []any{prefix, threads, per}
		}
		if _, err := e.pool.Exec(ctx, q, args...); err != nil {
			b.Fatalf("seed: %v", err)
		}
	}
}

// BenchmarkPutDuringSweep measures Put latency (one writer extending 10
// live threads) while a KeepLatest 1 sweep trims every old thread, and
// the same number of puts afterwards with no sweep running: p50/p99 of
// both in one run, with the sweep's duration and what it removed. Scale
// it with MEMVAULT_BENCH_SWEEP_CHECKPOINTS.
func BenchmarkPutDuringSweep(b *testing.B) {
	threads, per := sweepBenchSize(b)
	e := newBenchEnv(b, false)
	ctx := context.Background()
	vals := benchValues()
	heads := make([]checkpointer.Config, 10)
	versions := make([]map[string]string, len(heads))
	step := 0
	put := func() time.Duration {
		k := step % len(heads)
		step++
		if heads[k].ThreadID == "" {
			heads[k] = checkpointer.Config{ThreadID: "hot-" + strconv.Itoa(k)}
			versions[k] = map[string]string{}
		}
		nv := map[string]string{}
		for ch := range vals {
			if versions[k][ch] == "" || ch == "messages" || ch == "step" {
				nv[ch] = e.s.NextVersion(versions[k][ch])
				versions[k][ch] = nv[ch]
			}
		}
		cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(step), TS: time.Now(), ChannelValues: vals,
			ChannelVersions: copyMap(versions[k]), VersionsSeen: map[string]map[string]string{}}
		t0 := time.Now()
		cfg, err := e.s.Put(ctx, heads[k], cp, checkpointer.Metadata{"source": "loop", "step": step}, nv)
		if err != nil {
			b.Fatal(err)
		}
		heads[k] = cfg
		return time.Since(t0)
	}
	checkpointertest.BenchPutsDuringSweep(b, e.s, checkpointer.RetentionPolicy{KeepLatest: 1}, checkpointer.SweepOptions{},
		func() {
			// The seed empties the tables, hot threads included: they
			// start again from nothing, not from a head it removed.
			seedOld(b, e, threads, per)
			clear(heads)
			clear(versions)
		}, put)
}
