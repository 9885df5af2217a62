package pgsaver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/checkpointer/pgsaver"
	"github.com/memvault/memvault/serde"
)

// The workload of `memvault bench checkpointer`: checkpoints of 5 channels
// holding about 1 KiB of values, each Put writing new versions of 2 of them;
// reads on a thread of 100 checkpoints with 3 pending writes each.
//
// Each benchmark has three variants: the library with the plain codec, the
// library with the encrypting one, and "raw": the same SQL statements issued
// directly with pgx and values coded with encoding/json, the floor the
// library is measured against.

func benchValues() map[string]any {
	msgs := make([]any, 4)
	for i := range msgs {
		msgs[i] = map[string]any{"role": "user", "content": strings.Repeat(fmt.Sprintf("message %d ", i), 18)}
	}
	return map[string]any{"messages": msgs, "step": 3, "user": "u-42", "flags": []any{true, false}, "scratch": map[string]any{"k": "v"}}
}

type benchEnv struct {
	pool *pgxpool.Pool
	s    *pgsaver.Saver
}

func newBenchEnv(b *testing.B, encrypt bool) *benchEnv {
	b.Helper()
	opts := pgsaver.Options{}
	if encrypt {
		opts.Serde = encrypted(b)
	}
	s, pool := newSaver(b, opts)
	return &benchEnv{pool: pool, s: s}
}

// seed writes a thread of n checkpoints with 3 writes each through the
// library and returns the config of the latest.
func (e *benchEnv) seed(b *testing.B, thread string, n int) checkpointer.Config {
	b.Helper()
	ctx := context.Background()
	vals := benchValues()
	cfg := checkpointer.Config{ThreadID: thread}
	versions := map[string]string{}
	for i := range n {
		nv := map[string]string{}
		for ch := range vals {
			if i == 0 || ch == "messages" || ch == "step" {
				nv[ch] = e.s.NextVersion(versions[ch])
				versions[ch] = nv[ch]
			}
		}
		cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(i), TS: time.Now(), ChannelValues: vals,
			ChannelVersions: copyMap(versions), VersionsSeen: map[string]map[string]string{"agent": copyMap(versions)}}
		var err error
		cfg, err = e.s.Put(ctx, cfg, cp, checkpointer.Metadata{"source": "loop", "step": i}, nv)
		if err != nil {
			b.Fatal(err)
		}
		w := []checkpointer.Write{{Channel: "messages", Value: vals["messages"]}, {Channel: "step", Value: i}, {Channel: "user", Value: "u"}}
		if err := e.s.PutWrites(ctx, cfg, w, "task-1", ""); err != nil {
			b.Fatal(err)
		}
	}
	if _, err := e.pool.Exec(ctx, "ANALYZE"); err != nil {
		b.Fatal(err)
	}
	return cfg
}

func copyMap(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func BenchmarkPut(b *testing.B) {
	for _, mode := range []string{"plain", "encrypted", "raw"} {
		b.Run(mode, func(b *testing.B) {
			e := newBenchEnv(b, mode == "encrypted")
			ctx := context.Background()
			vals := benchValues()
			versions := map[string]string{}
			for ch := range vals {
				versions[ch] = e.s.NextVersion("")
			}
			cfg := checkpointer.Config{ThreadID: "bench-put"}
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				nv := map[string]string{
					"messages": e.s.NextVersion(versions["messages"]),
					"step":     e.s.NextVersion(versions["step"]),
				}
				versions["messages"], versions["step"] = nv["messages"], nv["step"]
				cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(i), TS: time.Now(), ChannelValues: vals,
					ChannelVersions: versions, VersionsSeen: map[string]map[string]string{"agent": versions}}
				md := checkpointer.Metadata{"source": "loop", "step": i}
				var err error
				if mode == "raw" {
					cfg.CheckpointID, err = rawPut(ctx, e.pool, cfg, cp, md, nv)
				} else {
					cfg, err = e.s.Put(ctx, cfg, cp, md, nv)
				}
				if err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkPutWrites(b *testing.B) {
	for _, mode := range []string{"plain", "encrypted", "raw"} {
		b.Run(mode, func(b *testing.B) {
			e := newBenchEnv(b, mode == "encrypted")
			ctx := context.Background()
			cfg := e.seed(b, "bench-writes", 1)
			vals := benchValues()
			writes := []checkpointer.Write{{Channel: "messages", Value: vals["messages"]}, {Channel: "step", Value: 4}, {Channel: "user", Value: "u"}}
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				task := fmt.Sprintf("task-%d", i)
				var err error
				if mode == "raw" {
					err = rawPutWrites(ctx, e.pool, cfg, writes, task)
				} else {
					err = e.s.PutWrites(ctx, cfg, writes, task, "")
				}
				if err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkGetTuple(b *testing.B) {
	for _, mode := range []string{"plain", "encrypted", "raw"} {
		b.Run(mode, func(b *testing.B) {
			e := newBenchEnv(b, mode == "encrypted")
			ctx := context.Background()
			e.seed(b, "bench-get", 100)
			cfg := checkpointer.Config{ThreadID: "bench-get"}
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				if mode == "raw" {
					if n, err := rawRead(ctx, e.pool, rawGetLatest, cfg.ThreadID, cfg.CheckpointNS); err != nil || n != 1 {
						b.Fatal(n, err)
					}
					continue
				}
				tu, err := e.s.GetTuple(ctx, cfg)
				if err != nil || tu == nil || len(tu.PendingWrites) != 3 {
					b.Fatal(tu, err)
				}
			}
		})
	}
}

func BenchmarkList10(b *testing.B) {
	for _, mode := range []string{"plain", "encrypted", "raw"} {
		b.Run(mode, func(b *testing.B) {
			e := newBenchEnv(b, mode == "encrypted")
			ctx := context.Background()
			e.seed(b, "bench-list", 100)
			cfg := &checkpointer.Config{ThreadID: "bench-list"}
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				if mode == "raw" {
					if n, err := rawRead(ctx, e.pool, rawList10, cfg.ThreadID, cfg.CheckpointNS); err != nil || n != 10 {
						b.Fatal(n, err)
					}
					continue
				}
				n := 0
				for _, err := range e.s.List(ctx, cfg, checkpointer.ListOptions{Limit: 10}) {
					if err != nil {
						b.Fatal(err)
					}
					n++
				}
				if n != 10 {
					b.Fatal(n)
				}
			}
		})
	}
}

// The raw baseline: the library's statements, typed out.

const rawSelect = `SELECT c.thread_id, c.checkpoint_ns, c.checkpoint_id, c.parent_checkpoint_id, c.checkpoint, c.metadata,
	(SELECT array_agg(array[convert_to(cv.key, 'UTF8'), convert_to(cv.value, 'UTF8'), convert_to(bl.type, 'UTF8'), bl.blob])
		FROM jsonb_each_text(c.checkpoint -> 'channel_versions') cv
		CROSS JOIN LATERAL (SELECT b.type, b.blob FROM checkpoint_blobs b WHERE b.thread_id = c.thread_id AND b.checkpoint_ns = c.checkpoint_ns
			AND b.channel = cv.key AND b.version = cv.value OFFSET 0) bl) AS channel_values,
	(SELECT array_agg(array[convert_to(cw.task_id, 'UTF8'), convert_to(cw.idx::text, 'UTF8'), convert_to(cw.channel, 'UTF8'), convert_to(coalesce(cw.type, ''), 'UTF8'), cw.blob] ORDER BY cw.task_id, cw.idx)
		FROM checkpoint_writes cw
		WHERE cw.thread_id = c.thread_id AND cw.checkpoint_ns = c.checkpoint_ns AND cw.checkpoint_id = c.checkpoint_id) AS pending_writes
FROM checkpoints c
WHERE c.thread_id = $1 AND c.checkpoint_ns = $2
ORDER BY c.checkpoint_id DESC`

const (
	rawGetLatest = rawSelect + ` LIMIT 1`
	rawList10    = rawSelect + ` LIMIT 10`
	rawBlobs     = `INSERT INTO checkpoint_blobs (thread_id, checkpoint_ns, channel, version, type, blob)
SELECT $1, $2, t.ch, t.ver, t.typ, t.bl
FROM unnest($3::text[], $4::text[], $5::text[], $6::bytea[], $8::boolean[]) AS t(ch, ver, typ, bl, inl),
	(SELECT (SELECT p.checkpoint FROM checkpoints p WHERE p.thread_id = $1 AND p.checkpoint_ns = $2 AND p.checkpoint_id = $7) AS doc) AS parent
WHERE NOT t.inl OR (parent.doc -> 'channel_values' ? t.ch AND parent.doc -> 'channel_versions' ->> t.ch = t.ver)
ON CONFLICT (thread_id, checkpoint_ns, channel, version) DO NOTHING`
	rawWrites = `INSERT INTO checkpoint_writes (thread_id, checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, blob)
SELECT $1, $2, $3, $4, $5, i, ch, typ, bl FROM unnest($6::integer[], $7::text[], $8::text[], $9::bytea[]) AS t(i, ch, typ, bl)
ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id, task_id, idx) DO NOTHING`
	rawCheckpoint = `INSERT INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, checkpoint, metadata)
VALUES ($1, $2, $3, $4, $5, $6)
ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id) DO UPDATE SET checkpoint = EXCLUDED.checkpoint, metadata = EXCLUDED.metadata`
)

// rawPut issues the library's two statements: the blob rows of the new
// versions plus the unchanged primitive values offered for the Python-inline
// check, then the checkpoint row.
func rawPut(ctx context.Context, pool *pgxpool.Pool, cfg checkpointer.Config, cp *checkpointer.Checkpoint, md checkpointer.Metadata, nv map[string]string) (string, error) {
	var chans, vers, types []string
	var blobs [][]byte
	var inline []bool
	for ch, val := range cp.ChannelValues {
		v, isNew := nv[ch]
		if !isNew {
			switch val.(type) {
			case string, int, float64, bool, nil:
			default:
				continue
			}
			v = cp.ChannelVersions[ch]
		}
		data, err := json.Marshal(val)
		if err != nil {
			return "", err
		}
		chans, vers, types, blobs, inline = append(chans, ch), append(vers, v), append(types, "json"), append(blobs, data), append(inline, !isNew)
	}
	doc, err := json.Marshal(map[string]any{"v": cp.V, "id": cp.ID, "ts": cp.TS.UTC().Format(checkpointer.TimeLayout),
		"channel_values": map[string]any{}, "channel_versions": cp.ChannelVersions, "versions_seen": cp.VersionsSeen, "updated_channels": cp.UpdatedChannels})
	if err != nil {
		return "", err
	}
	meta, err := json.Marshal(md)
	if err != nil {
		return "", err
	}
	var parent *string
	if cfg.CheckpointID != "" {
		parent = &cfg.CheckpointID
	}
	batch := &pgx.Batch{}
	batch.Queue(rawBlobs, cfg.ThreadID, cfg.CheckpointNS, chans, vers, types, blobs, parent, inline)
	batch.Queue(rawCheckpoint, cfg.ThreadID, cfg.CheckpointNS, cp.ID, parent, json.RawMessage(doc), json.RawMessage(meta))
	if err := pool.SendBatch(ctx, batch).Close(); err != nil {
		return "", err
	}
	return cp.ID, nil
}

func rawPutWrites(ctx context.Context, pool *pgxpool.Pool, cfg checkpointer.Config, writes []checkpointer.Write, task string) error {
	idxs := make([]int32, len(writes))
	chans := make([]string, len(writes))
	types := make([]string, len(writes))
	blobs := make([][]byte, len(writes))
	for i, w := range writes {
		data, err := json.Marshal(w.Value)
		if err != nil {
			return err
		}
		idxs[i], chans[i], types[i], blobs[i] = int32(i), w.Channel, "json", data
	}
	_, err := pool.Exec(ctx, rawWrites, cfg.ThreadID, cfg.CheckpointNS, cfg.CheckpointID, task, "", idxs, chans, types, blobs)
	return err
}

// rawRead runs a read statement, scans every row and decodes its JSON: the
// document, the metadata, each value and each write.
func rawRead(ctx context.Context, pool *pgxpool.Pool, sql string, args ...any) (int, error) {
	rows, err := pool.Query(ctx, sql, args...)
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		var thread, ns, id string
		var parent *string
		var doc, meta []byte
		var vals, writes pgtype.FlatArray[[]byte]
		if err := rows.Scan(&thread, &ns, &id, &parent, &doc, &meta, &vals, &writes); err != nil {
			return n, err
		}
		var d, m map[string]any
		if err := json.Unmarshal(doc, &d); err != nil {
			return n, err
		}
		if err := json.Unmarshal(meta, &m); err != nil {
			return n, err
		}
		for i := 3; i < len(vals); i += 4 {
			var v any
			if string(vals[i-1]) != serde.TypeEmpty {
				if err := json.Unmarshal(vals[i], &v); err != nil {
					return n, err
				}
			}
		}
		for i := 4; i < len(writes); i += 5 {
			var v any
			if err := json.Unmarshal(writes[i], &v); err != nil {
				return n, err
			}
		}
		n++
	}
	return n, rows.Err()
}

// BenchmarkConcurrent16 runs each operation with 16 in flight over a pool of
// 16 connections: the saver holds no lock of its own, so throughput is
// bounded by PostgreSQL, not by the saver.
func BenchmarkConcurrent16(b *testing.B) {
	for _, op := range []string{"put", "get_tuple", "list10"} {
		for _, mode := range []string{"plain", "raw"} {
			b.Run(op+"/"+mode, func(b *testing.B) {
				e := newBenchEnv(b, false)
				ctx := context.Background()
				cfg := e.pool.Config()
				cfg.MaxConns = 16
				pool, err := pgxpool.NewWithConfig(ctx, cfg)
				if err != nil {
					b.Fatal(err)
				}
				defer pool.Close()
				s, err := pgsaver.New(pool, pgsaver.Options{})
				if err != nil {
					b.Fatal(err)
				}
				e.seed(b, "bench-c", 100)
				vals := benchValues()
				var mu sync.Mutex
				thread := 0
				b.SetParallelism((16 + runtime.GOMAXPROCS(0) - 1) / runtime.GOMAXPROCS(0))
				b.ReportAllocs()
				b.ResetTimer()
				b.RunParallel(func(pb *testing.PB) {
					mu.Lock()
					thread++
					tcfg := checkpointer.Config{ThreadID: fmt.Sprintf("put-%d", thread)}
					mu.Unlock()
					versions := map[string]string{}
					for ch := range vals {
						versions[ch] = s.NextVersion("")
					}
					read := checkpointer.Config{ThreadID: "bench-c"}
					for i := 0; pb.Next(); i++ {
						var err error
						switch {
						case op == "put":
							nv := map[string]string{"messages": s.NextVersion(versions["messages"]), "step": s.NextVersion(versions["step"])}
							versions["messages"], versions["step"] = nv["messages"], nv["step"]
							cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(i), TS: time.Now(), ChannelValues: vals,
								ChannelVersions: copyMap(versions), VersionsSeen: map[string]map[string]string{}}
							if mode == "raw" {
								tcfg.CheckpointID, err = rawPut(ctx, pool, tcfg, cp, checkpointer.Metadata{"step": i}, nv)
							} else {
								tcfg, err = s.Put(ctx, tcfg, cp, checkpointer.Metadata{"step": i}, nv)
							}
						case op == "get_tuple" && mode == "raw":
							_, err = rawRead(ctx, pool, rawGetLatest, read.ThreadID, read.CheckpointNS)
						case op == "get_tuple":
							_, err = s.GetTuple(ctx, read)
						case mode == "raw":
							_, err = rawRead(ctx, pool, rawList10, read.ThreadID, read.CheckpointNS)
						default:
							for _, lerr := range s.List(ctx, &read, checkpointer.ListOptions{Limit: 10}) {
								if lerr != nil {
									err = lerr
								}
							}
						}
						if err != nil {
							b.Error(err)
							return
						}
					}
				})
			})
		}
	}
}
