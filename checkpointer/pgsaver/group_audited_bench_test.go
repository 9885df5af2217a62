package pgsaver_test

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/memvault/memvault/audit"
	"github.com/memvault/memvault/audit/audittest"
	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/checkpointer/pgsaver"
)

// BenchmarkAuditedGroupCommit16: puts and put_writes, 16 in flight over 16
// connections, encrypted, with and without an audit trail in the same
// schema (its records in the writes' transactions) and with and without
// group commit. With group commit, the audited writes' records are rows
// of the group's statements (group_records.go): audited-grouped ÷ grouped
// is what auditing costs a group-committed writer; audited-grouped ÷
// encrypted what it costs against one transaction per write.
func BenchmarkAuditedGroupCommit16(b *testing.B) {
	for _, op := range []string{"put", "put_writes"} {
		for _, mode := range []string{"encrypted", "audited", "grouped", "audited-grouped"} {
			b.Run(op+"/"+mode, func(b *testing.B) {
				ctx := context.Background()
				e := newBenchEnv(b, false)
				cfg := e.pool.Config()
				cfg.MaxConns = 16
				pool, err := pgxpool.NewWithConfig(ctx, cfg)
				if err != nil {
					b.Fatal(err)
				}
				defer pool.Close()
				opts := pgsaver.Options{Serde: encrypted(b)}
				if mode == "grouped" || mode == "audited-grouped" {
					opts.GroupCommit = 64
				}
				inner, err := pgsaver.New(pool, opts)
				if err != nil {
					b.Fatal(err)
				}
				var s checkpointer.Saver = inner
				if mode == "audited" || mode == "audited-grouped" {
					tb, err := ownTrail(ctx, pool)
					if err != nil {
						b.Fatal(err)
					}
					if err := tb.Setup(ctx); err != nil {
						b.Fatal(err)
					}
					tr, err := audittest.InTxTrail(tb)
					if err != nil {
						b.Fatal(err)
					}
					a := audit.NewSaver(inner, tr, nil)
					defer a.(interface{ Close() error }).Close()
					s = a
				}
				vals := benchValues()
				var mu sync.Mutex
				thread := 0
				b.SetParallelism((16 + runtime.GOMAXPROCS(0) - 1) / runtime.GOMAXPROCS(0))
				b.ReportAllocs()
				b.ResetTimer()
				b.RunParallel(func(pb *testing.PB) {
					mu.Lock()
					thread++
					tcfg := checkpointer.Config{ThreadID: fmt.Sprintf("ag-%d", thread)}
					mu.Unlock()
					versions := map[string]string{}
					for ch := range vals {
						versions[ch] = inner.NextVersion("")
					}
					// put_writes writes to the thread's first checkpoint.
					if op == "put_writes" {
						cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(0), TS: time.Now(), ChannelValues: vals,
							ChannelVersions: copyMap(versions), VersionsSeen: map[string]map[string]string{}}
						var err error
						if tcfg, err = s.Put(ctx, tcfg, cp, checkpointer.Metadata{"step": 0}, copyMap(versions)); err != nil {
							b.Error(err)
							return
						}
					}
					for i := 1; pb.Next(); i++ {
						var err error
						if op == "put" {
							nv := map[string]string{"messages": inner.NextVersion(versions["messages"]), "step": inner.NextVersion(versions["step"])}
							versions["messages"], versions["step"] = nv["messages"], nv["step"]
							cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(i), TS: time.Now(), ChannelValues: vals,
								ChannelVersions: copyMap(versions), VersionsSeen: map[string]map[string]string{}}
							tcfg, err = s.Put(ctx, tcfg, cp, checkpointer.Metadata{"step": i}, nv)
						} else {
							err = s.PutWrites(ctx, tcfg, []checkpointer.Write{{Channel: "messages", Value: vals["messages"]}, {Channel: "step", Value: i}},
								fmt.Sprintf("task-%d", i), "")
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
