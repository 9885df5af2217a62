package inspector_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/inspector"
	"github.com/memvault/memvault/store"
	"github.com/memvault/memvault/vault"
)

// benchVault is an encrypted, audited SQLite vault with a thread of 1 000
// checkpoints (a conversation that grows, a fork every 100 steps) and a
// namespace of 10 000 memories.
func benchVault(b *testing.B) *vault.Handle {
	b.Helper()
	h := openVault(b, b.TempDir())
	ctx := context.Background()
	parent := ""
	var msgs []any
	for i := range 1000 {
		msgs = append(msgs, fmt.Sprintf("message %d: where is parcel %d? it left the depot at %d:00", i, 1000+i, i%24))
		if len(msgs) > 20 {
			msgs = msgs[1:]
		}
		values := map[string]any{"messages": append([]any(nil), msgs...), "step": int64(i)}
		versions := map[string]string{"messages": fmt.Sprint(i + 1), "step": fmt.Sprint(i + 1)}
		cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(i), TS: time.Now(), ChannelValues: values, ChannelVersions: versions}
		cfg, err := h.Saver.Put(ctx, checkpointer.Config{ThreadID: "bench", CheckpointID: parent}, cp, checkpointer.Metadata{"step": i, "source": "loop"}, versions)
		if err != nil {
			b.Fatal(err)
		}
		if i%100 == 99 {
			// A fork: a sibling of this checkpoint; the main line goes on.
			fork := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(i), TS: time.Now(), ChannelValues: map[string]any{"step": int64(-i)}, ChannelVersions: map[string]string{"step": fmt.Sprint(i + 2)}}
			if _, err := h.Saver.Put(ctx, checkpointer.Config{ThreadID: "bench", CheckpointID: parent}, fork, checkpointer.Metadata{"step": i, "source": "fork"}, fork.ChannelVersions); err != nil {
				b.Fatal(err)
			}
		}
		parent = cfg.CheckpointID
	}
	ns := store.Namespace{"bench", "memories"}
	for lo := 0; lo < 10000; lo += 500 {
		ops := make([]store.Op, 0, 500)
		for i := lo; i < lo+500; i++ {
			ops = append(ops, store.PutOp{Namespace: ns, Key: fmt.Sprintf("m%05d", i), Value: map[string]any{"text": fmt.Sprintf("memory %d: the customer prefers parcel lockers near %d Rue Example", i, i%97)}})
		}
		if _, err := h.Store.Batch(ctx, ops); err != nil {
			b.Fatal(err)
		}
	}
	return h
}

// BenchmarkPages renders the heavy pages through the handler (no network,
// no gate): a thread of 1 000 checkpoints, first page (50) and all of it on
// one page; a namespace of 10 000 memories, first page and a semantic search;
// a metadata search of the threads (which decrypts every checkpoint it
// matches) and the audit view of a trail of about 1 000 records.
func BenchmarkPages(b *testing.B) {
	h := benchVault(b)
	for _, bc := range []struct {
		name     string
		pageSize int
		url      string
	}{
		{"thread1000/page50", 0, "/thread?id=bench"},
		{"thread1000/all", 1001 + 10, "/thread?id=bench"},
		{"threads", 0, "/threads"},
		{"memories10000/page50", 0, "/memories?ns=bench&ns=memories"},
		{"memories10000/search", 0, "/memories?ns=bench&ns=memories&q=parcel+lockers+near+42"},
		{"keys", 0, "/keys"},
		{"threads/meta", 0, "/threads?meta=source=fork"},
		{"audit", 0, "/audit"},
		{"audit/older", 0, "/audit?before=500"},
	} {
		in, err := inspector.New(h, inspector.Options{PageSize: bc.pageSize})
		if err != nil {
			b.Fatal(err)
		}
		b.Run(bc.name, func(b *testing.B) {
			var size int
			for b.Loop() {
				rec := httptest.NewRecorder()
				in.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, bc.url, nil))
				if rec.Code != http.StatusOK {
					b.Fatalf("%s: %d %s", bc.url, rec.Code, rec.Body.String())
				}
				size = rec.Body.Len()
			}
			b.ReportMetric(float64(size), "page-bytes")
		})
	}
}
