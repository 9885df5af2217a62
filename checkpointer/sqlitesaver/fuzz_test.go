package sqlitesaver

import (
	"context"
	"testing"

	"github.com/memvault/memvault/checkpointer"
)

// FuzzStoredRow stores arbitrary checkpoint documents, metadata and blob
// rows (as a corrupted or foreign database might hold them) and reads them
// back through GetTuple and List: errors are fine, panics are not.
func FuzzStoredRow(f *testing.F) {
	f.Add([]byte(`{"v":4,"id":"1","ts":"2024-05-04T06:32:42.235444+00:00","channel_values":{},"channel_versions":{"a":"1"},"versions_seen":{}}`),
		[]byte(`{"source":"loop","step":1}`), "json", []byte(`[1,2]`), "1")
	f.Add([]byte(`{"v":1,"channel_versions":{"a":2},"channel_values":{"x":"inline"},"pending_sends":[]}`),
		[]byte(`{}`), "empty", []byte(nil), "2")
	f.Add([]byte(`{"v":4,"channel_versions":{"a":1.5}}`), []byte(`[]`), "msgpack", []byte{0xc1}, "1.5")
	f.Add([]byte(`not json`), []byte(`{"a":`), "json+mvgcm", []byte{1, 2, 3}, "")
	ctx := context.Background()
	s := openSaver(f, ":memory:", Options{})
	f.Fuzz(func(t *testing.T, doc, meta []byte, typ string, blob []byte, version string) {
		w := s.d.db.Writer()
		for _, q := range []string{`DELETE FROM checkpoints`, `DELETE FROM checkpoint_blobs`, `DELETE FROM checkpoint_writes`} {
			if _, err := w.Exec(q); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := w.Exec(`INSERT INTO checkpoints VALUES ('t', '', 'c2', 'c1', NULL, ?, ?)`, string(doc), string(meta)); err != nil {
			// The run_id expression index makes SQLite itself refuse
			// metadata that is not JSON.
			return
		}
		if _, err := w.Exec(`INSERT INTO checkpoint_blobs VALUES ('t', '', 'a', ?, ?, ?)`, version, typ, blob); err != nil {
			t.Fatal(err)
		}
		if _, err := w.Exec(`INSERT INTO checkpoint_writes VALUES ('t', '', 'c1', 'task', 0, ?, ?, ?, '')`,
			checkpointer.ChannelTasks, typ, append([]byte{}, blob...)); err != nil {
			t.Fatal(err)
		}
		_, _ = s.GetTuple(ctx, checkpointer.Config{ThreadID: "t"})
		for _, err := range s.List(ctx, nil, checkpointer.ListOptions{Filter: map[string]any{"source": "loop"}}) {
			_ = err
		}
		_ = s.Prune(ctx, []string{"t"}, checkpointer.PruneKeepLatest)
	})
}
