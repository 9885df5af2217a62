package redissaver

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/memvault/memvault/backends/redis/redistest"
	"github.com/memvault/memvault/checkpointer"
)

// TestIndexRefusedStoresNothing: on a cluster, when the thread index's
// node refuses a put's ZADD (out of memory under noeviction) the put fails
// and stores nothing (found by review: the ZADD and the script went in one
// pipeline, the put returned the OOM error with its checkpoint stored, and
// the thread, absent from the index, was never listed nor swept by
// retention).
func TestIndexRefusedStoresNothing(t *testing.T) {
	for _, v := range redistest.Versions {
		t.Run(fmt.Sprintf("redis%d", v), func(t *testing.T) { indexOOM(t, v) })
	}
}

func indexOOM(t *testing.T, v int) {
	c := redistest.StartCluster(t, v)
	rdb := c.Client(t)
	ctx := context.Background()
	s, err := New(rdb, Options{Prefix: redistest.Prefix()})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	put := func(thread string) error {
		cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(0), TS: time.Now(), ChannelValues: map[string]any{"notes": "carol takes insulin"},
			ChannelVersions: map[string]string{"notes": s.NextVersion("")}}
		_, err := s.Put(ctx, checkpointer.Config{ThreadID: thread}, cp, nil, cp.ChannelVersions)
		return err
	}
	indexNode, err := rdb.MasterForKey(ctx, s.d.threadsKey())
	if err != nil {
		t.Fatal(err)
	}
	// Two threads whose slot is on one node, not the index's: the first
	// loads the scripts there, the second is the victim.
	var others []string
	node := ""
	for i := 0; len(others) < 2; i++ {
		th := "carol:visit-" + strconv.Itoa(i)
		n, err := rdb.MasterForKey(ctx, s.d.keys(th).cp)
		if err != nil {
			t.Fatal(err)
		}
		if addr := n.Options().Addr; addr != indexNode.Options().Addr && (node == "" || addr == node) {
			node = addr
			others = append(others, th)
		}
	}
	if err := put(others[0]); err != nil {
		t.Fatal(err)
	}
	// The index's node runs out of memory (noeviction is the default).
	if err := indexNode.ConfigSet(ctx, "maxmemory", "1").Err(); err != nil {
		t.Fatal(err)
	}
	perr := put(others[1])
	if err := indexNode.ConfigSet(ctx, "maxmemory", "0").Err(); err != nil {
		t.Fatal(err)
	}
	tp, gerr := s.GetTuple(ctx, checkpointer.Config{ThreadID: others[1]})
	var listed []string
	for ti, err := range s.ListThreads(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		listed = append(listed, ti.ThreadID)
	}
	rep, serr := s.Sweep(ctx, checkpointer.RetentionPolicy{IdleTTL: time.Nanosecond}, checkpointer.SweepOptions{})
	after, _ := s.GetTuple(ctx, checkpointer.Config{ThreadID: others[1]})
	if tp != nil && !slices.Contains(listed, others[1]) {
		t.Fatalf("a put refused with %v is stored (GetTuple: %v) and its thread is not in the index: ListThreads = %v; "+
			"a retention sweep of every thread idle for 1 ns (%+v, %v) leaves it stored: %v",
			perr, gerr, listed, rep, serr, after != nil)
	}
	t.Logf("put with the index node out of memory: %v; stored %v; listed %v", perr, tp != nil, listed)
}
