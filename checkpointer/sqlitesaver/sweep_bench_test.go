package sqlitesaver

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/checkpointer/checkpointertest"
)

// seedOldSQLite fills the tables, by three set-based statements, with
// threads of per old checkpoints: a ~500-byte "messages" value per
// checkpoint, a "base" value all reference, two pending writes each.
func seedOldSQLite(b *testing.B, s *Saver, threads, per int) {
	b.Helper()
	ctx := context.Background()
	prefix := checkpointer.IDFloor(time.Now().Add(-90 * 24 * time.Hour))[:19]
	grid := `WITH RECURSIVE t(t) AS (SELECT 0 UNION ALL SELECT t + 1 FROM t WHERE t + 1 < ?2),
		i(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM i WHERE i + 1 < ?3) `
	id := `?1 || printf('%04x-%012x', i, t)`
	ver := `printf('%032d.0', i + 1)`
	err := s.d.db.Write(ctx, func(tx *sql.Tx) error {
		for _, q := range []string{
			`DELETE FROM checkpoints`, `DELETE FROM checkpoint_blobs`, `DELETE FROM checkpoint_writes`,
			grid + `INSERT INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, checkpoint, metadata)
			SELECT printf('old-%06d', t), '', ` + id + `, CASE WHEN i > 0 THEN ?1 || printf('%04x-%012x', i - 1, t) END,
				json_object('v', 4, 'id', ` + id + `, 'ts', '2025-01-01T00:00:00+00:00', 'channel_values', json('{}'),
					'channel_versions', json_object('messages', ` + ver + `, 'base', printf('%032d.0', 1)),
					'versions_seen', json('{}'), 'updated_channels', json('[]')),
				'{"source": "loop"}'
			FROM t, i`,
			grid + `INSERT INTO checkpoint_blobs (thread_id, checkpoint_ns, channel, version, type, blob)
			SELECT printf('old-%06d', t), '', 'messages', ` + ver + `, 'json', CAST('"' || printf('%.500c', 'm') || '"' AS BLOB) FROM t, i
			UNION ALL SELECT printf('old-%06d', t), '', 'base', printf('%032d.0', 1), 'json', CAST('"base"' AS BLOB) FROM t WHERE ?1 IS NOT NULL`,
			grid + `INSERT INTO checkpoint_writes (thread_id, checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, blob)
			SELECT printf('old-%06d', t), '', ` + id + `, 'task-1', '', w.w, 'messages', 'json', CAST('"write"' AS BLOB)
			FROM t, i, (SELECT 0 AS w UNION ALL SELECT 1) w`,
		} {
			var args []any
			if q[0] == 'W' {
				args = []any{prefix, threads, per}
			}
			if _, err := tx.ExecContext(ctx, q, args...); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		b.Fatalf("seed: %v", err)
	}
}

// BenchmarkPutDuringSweep measures Put latency on a WAL file (one writer
// extending 10 live threads) while a KeepLatest 1 sweep trims old threads
// of 100 checkpoints (20 000 checkpoints unless
// MEMVAULT_BENCH_SWEEP_CHECKPOINTS says otherwise), and the same number of
// puts with no sweep, at two batch sizes: SQLite has one writer, so a put
// waits for the batch in progress, and the batch size is the knob.
func BenchmarkPutDuringSweep(b *testing.B) {
	total := 20000
	if v := os.Getenv("MEMVAULT_BENCH_SWEEP_CHECKPOINTS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 100 {
			b.Fatalf("MEMVAULT_BENCH_SWEEP_CHECKPOINTS=%q: want an integer >= 100", v)
		}
		total = n
	}
	for _, batch := range []int{100, 10} {
		b.Run("batch="+strconv.Itoa(batch), func(b *testing.B) {
			s := openSaver(b, filepath.Join(b.TempDir(), "sweep.db"), Options{})
			ctx := context.Background()
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
				vals := benchState(step)
				nv := map[string]string{}
				for ch := range vals {
					nv[ch] = s.NextVersion(versions[k][ch])
					versions[k][ch] = nv[ch]
				}
				cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(step), TS: time.Now(), ChannelValues: vals,
					ChannelVersions: maps(versions[k]), VersionsSeen: map[string]map[string]string{}}
				t0 := time.Now()
				cfg, err := s.Put(ctx, heads[k], cp, checkpointer.Metadata{"source": "loop", "step": step}, nv)
				if err != nil {
					b.Fatal(err)
				}
				heads[k] = cfg
				return time.Since(t0)
			}
			checkpointertest.BenchPutsDuringSweep(b, s, checkpointer.RetentionPolicy{KeepLatest: 1}, checkpointer.SweepOptions{BatchThreads: batch},
				func() {
					// The seed empties the tables, hot threads included:
					// they start again from nothing, not from a head it
					// removed.
					seedOldSQLite(b, s, total/100, 100)
					clear(heads)
					clear(versions)
				}, put)
		})
	}
}

func maps(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
