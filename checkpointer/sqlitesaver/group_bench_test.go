package sqlitesaver_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/checkpointer/sqlitesaver"
	"github.com/memvault/memvault/internal/sqlitedb"
)

// BenchmarkGroupCommit measures puts (two new ~400-byte values each, a
// thread per writer) with group commit off (group=0) and on (group=64),
// and the raw baseline (group=raw: the same rows inserted by plain SQL,
// one transaction per put), at 1 and 16 writers, with the file's default
// sync (none per commit in WAL mode) and FullSync (one per commit, which
// a group shares).
func BenchmarkGroupCommit(b *testing.B) {
	val := strings.Repeat("x", 400)
	for _, full := range []bool{false, true} {
		for _, conc := range []int{1, 16} {
			for _, group := range []int{-1, 0, 64} {
				name := fmt.Sprint(group)
				if group < 0 {
					name = "raw"
				}
				b.Run(fmt.Sprintf("fullsync=%v/writers=%d/group=%s", full, conc, name), func(b *testing.B) {
					path := filepath.Join(b.TempDir(), "g.db")
					s, err := sqlitesaver.Open(context.Background(), path, sqlitesaver.Options{GroupCommit: max(group, 0), FullSync: full})
					if err != nil {
						b.Fatal(err)
					}
					defer s.Close()
					put := func(thread string, cp *checkpointer.Checkpoint) error {
						_, err := s.Put(context.Background(), checkpointer.Config{ThreadID: thread}, cp, nil, cp.ChannelVersions)
						return err
					}
					if group < 0 {
						put = rawPut(b, path)
					}
					var next atomic.Int64
					var wg sync.WaitGroup
					b.ResetTimer()
					for w := range conc {
						wg.Add(1)
						go func() {
							defer wg.Done()
							for {
								i := int(next.Add(1))
								if i > b.N {
									return
								}
								v := fmt.Sprint(i)
								cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(i), ChannelValues: map[string]any{"a": val, "b": val},
									ChannelVersions: map[string]string{"a": v, "b": v}}
								if err := put(fmt.Sprintf("w%d", w), cp); err != nil {
									b.Error(err)
									return
								}
							}
						}()
					}
					wg.Wait()
					b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "puts/s")
				})
			}
		}
	}
}

// rawPut is the raw baseline of BenchmarkGroupCommit: a put's rows (the
// values JSON-encoded, the document and metadata as JSON) inserted by
// plain SQL in one write transaction of the file at path, whose
// connections the saver opened (so with its sync setting).
func rawPut(b *testing.B, path string) func(thread string, cp *checkpointer.Checkpoint) error {
	db, err := sqlitedb.Open(path, sqlitedb.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	return func(thread string, cp *checkpointer.Checkpoint) error {
		doc, err := json.Marshal(map[string]any{"v": 4, "id": cp.ID, "channel_versions": cp.ChannelVersions})
		if err != nil {
			return err
		}
		return db.Write(context.Background(), func(tx *sql.Tx) error {
			for ch, v := range cp.ChannelVersions {
				blob, err := json.Marshal(cp.ChannelValues[ch])
				if err != nil {
					return err
				}
				if _, err := tx.Exec(`INSERT INTO checkpoint_blobs (thread_id, checkpoint_ns, channel, version, type, blob)
					VALUES (?, '', ?, ?, 'json', ?) ON CONFLICT DO NOTHING`, thread, ch, v, blob); err != nil {
					return err
				}
			}
			_, err := tx.Exec(`INSERT INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, checkpoint, metadata)
				VALUES (?, '', ?, ?, '{}')`, thread, cp.ID, doc)
			return err
		})
	}
}
