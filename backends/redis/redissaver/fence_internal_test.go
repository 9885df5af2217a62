package redissaver

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/memvault/memvault/backends/redis/redistest"
	"github.com/memvault/memvault/checkpointer"
	mvkeys "github.com/memvault/memvault/keys"
	"github.com/memvault/memvault/keys/keystest"
	"github.com/memvault/memvault/keys/memkeys"
)

// TestFenceCluster: on a three-master cluster, every thread's fence
// counter lies in the thread's slot (the server's CLUSTER KEYSLOT agrees
// with the saver's), and a write of a subject's values after
// DrainWrites — which moved every slot's counter — retries with the new
// value and is stored, while one of an erased subject is refused.
func TestFenceCluster(t *testing.T) {
	c := redistest.StartCluster(t, 8)
	rdb := c.Client(t)
	ctx := context.Background()
	h := keystest.NewHierarchy(t, memkeys.New(), mvkeys.Subjects{ThreadSeparator: "-"})
	s, err := New(rdb, Options{Prefix: redistest.Prefix(), Serde: h})
	if err != nil {
		t.Fatal(err)
	}
	if !s.d.fc.cluster {
		t.Fatal("a ClusterClient's fence is not per slot")
	}
	for i := range 200 {
		k := s.d.keys(fmt.Sprintf("th%%}-%d", i))
		want, err := rdb.ClusterKeySlot(ctx, k.lock).Result()
		if err != nil {
			t.Fatal(err)
		}
		slot := s.d.fc.slot(k)
		got, err := rdb.ClusterKeySlot(ctx, s.d.fc.key(slot)).Result()
		if err != nil {
			t.Fatal(err)
		}
		if int64(slot) != want || got != want {
			t.Fatalf("thread key %q: server slot %d, saver's %d, its fence key's %d", k.lock, want, slot, got)
		}
	}
	put := func(thread string, n int) error {
		cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(n), TS: time.Now(),
			ChannelValues: map[string]any{"x": "v"}, ChannelVersions: map[string]string{"x": s.NextVersion("")}}
		_, err := s.Put(ctx, checkpointer.Config{ThreadID: thread}, cp, nil, cp.ChannelVersions)
		return err
	}
	for n, th := range []string{"carol-1", "dave-1", "erin-1"} {
		if err := put(th, n); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := h.StartErasure(ctx, "carol"); err != nil {
		t.Fatal(err)
	}
	if err := s.DrainWrites(ctx); err != nil {
		t.Fatal(err)
	}
	for n, th := range []string{"dave-1", "erin-1"} {
		if err := put(th, 10+n); err != nil {
			t.Fatalf("a write of another subject after the drain: %v", err)
		}
	}
	if err := put("carol-1", 20); err == nil {
		t.Fatal("a write of the erased subject was stored")
	}
}
