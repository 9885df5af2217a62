package redissaver

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/memvault/memvault/backends/redis/redistest"
	"github.com/memvault/memvault/checkpointer"
)

// rowThreadIDs lists s's RowThreadIDs.
func rowThreadIDs(t *testing.T, s *Saver) []string {
	t.Helper()
	var ids []string
	for id, err := range s.RowThreadIDs(context.Background()) {
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	return ids
}

// pendingWrite stores one pending write of thread for a checkpoint never
// stored.
func pendingWrite(t *testing.T, s *Saver, thread string) {
	t.Helper()
	cfg := checkpointer.Config{ThreadID: thread, CheckpointID: checkpointer.NewID(0)}
	if err := s.PutWrites(context.Background(), cfg, []checkpointer.Write{{Channel: "notes", Value: "pending"}}, "task-1", ""); err != nil {
		t.Fatal(err)
	}
}

// TestWritesIndexStaleOnCluster: on a cluster a saver's pending writes
// skip indexing a thread it indexed before; when another process deleted
// the thread since (taking its index entry out), the script finds it
// holding nothing and refuses, and the thread is indexed again, so it is
// listed. Without that check the thread held pending writes and was in
// no index: RowThreadIDs missed it.
func TestWritesIndexStaleOnCluster(t *testing.T) {
	c := redistest.StartCluster(t, 8)
	prefix := redistest.Prefix()
	a, err := New(c.Client(t), Options{Prefix: prefix})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := New(c.Client(t), Options{Prefix: prefix})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	pendingWrite(t, a, "carol")
	if !a.d.indexed.has("carol") {
		t.Fatal("the first pending writes did not remember indexing the thread")
	}
	if err := b.DeleteThread(context.Background(), "carol"); err != nil {
		t.Fatal(err)
	}
	if got := rowThreadIDs(t, a); len(got) != 0 {
		t.Fatalf("after the deletion RowThreadIDs = %v, want none", got)
	}
	pendingWrite(t, a, "carol")
	if got := rowThreadIDs(t, b); !slices.Equal(got, []string{"carol"}) {
		t.Fatalf("pending writes after another process deleted the thread: RowThreadIDs = %v, want [carol]", got)
	}
}

// TestWritesIndexRefusedStoresNothing: TestIndexRefusedStoresNothing for
// pending writes. On a cluster the thread index is on another node; when
// that node refuses the thread's entry (out of memory), the pending
// writes fail and store nothing, so no thread holds rows that RowThreads
// (an erasure) cannot find.
func TestWritesIndexRefusedStoresNothing(t *testing.T) {
	for _, v := range redistest.Versions {
		t.Run(fmt.Sprintf("redis%d", v), func(t *testing.T) {
			c := redistest.StartCluster(t, v)
			rdb := c.Client(t)
			ctx := context.Background()
			s, err := New(rdb, Options{Prefix: redistest.Prefix()})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			indexNode, err := rdb.MasterForKey(ctx, s.d.threadsKey())
			if err != nil {
				t.Fatal(err)
			}
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
			pendingWrite(t, s, others[0]) // loads the scripts on that node
			if err := indexNode.ConfigSet(ctx, "maxmemory", "1").Err(); err != nil {
				t.Fatal(err)
			}
			cfg := checkpointer.Config{ThreadID: others[1], CheckpointID: checkpointer.NewID(0)}
			werr := s.PutWrites(ctx, cfg, []checkpointer.Write{{Channel: "notes", Value: "carol takes insulin"}}, "task-1", "")
			if err := indexNode.ConfigSet(ctx, "maxmemory", "0").Err(); err != nil {
				t.Fatal(err)
			}
			n, err := rdb.Exists(ctx, s.d.keys(others[1]).fixed()...).Result()
			if err != nil {
				t.Fatal(err)
			}
			listed := rowThreadIDs(t, s)
			if werr == nil || n > 0 {
				t.Fatalf("pending writes with the index's node out of memory: %v; thread keys stored: %d; RowThreadIDs = %v", werr, n, listed)
			}
			t.Logf("pending writes with the index node out of memory: %v", werr)
		})
	}
}

// TestRollbackKeepsWritesOnlyThreadIndexed: a deletion of a thread holding
// only pending writes that fails and rolls back puts the thread back in
// the index. Before, the rollback re-indexed only a thread whose saved
// keys held a checkpoint, so the restored writes were in no index.
func TestRollbackKeepsWritesOnlyThreadIndexed(t *testing.T) {
	srv := redistest.Shared(t, 8)
	s, err := New(srv.Client(t), Options{Prefix: redistest.Prefix()})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	pendingWrite(t, s, "carol")
	boom := errors.New("boom")
	err = s.d.Update(ctx, func(tx checkpointer.DriverTx) error {
		if _, err := tx.DeleteThreads(ctx, []string{"carol"}, false); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("Update = %v, want boom", err)
	}
	if got := rowThreadIDs(t, s); !slices.Equal(got, []string{"carol"}) {
		t.Fatalf("after a rolled-back deletion RowThreadIDs = %v, want [carol]", got)
	}
}

// TestRowThreadsIndexesOlderThreads: a thread holding only pending writes
// stored by an older version is in no index; the first RowThreads of a
// saver finds it with a SCAN of the prefix's keys and indexes it, once
// per prefix (the mark "<prefix>:threads:complete"), on one server and a
// cluster, with a prefix holding glob characters and thread ids holding
// the tag's escapes.
func TestRowThreadsIndexesOlderThreads(t *testing.T) {
	for _, mode := range []string{"single", "cluster"} {
		t.Run(mode, func(t *testing.T) {
			var rdb redis.UniversalClient
			if mode == "single" {
				rdb = redistest.Shared(t, 8).Client(t)
			} else {
				rdb = redistest.StartCluster(t, 8).Client(t)
			}
			ctx := context.Background()
			base := redistest.Prefix()
			prefix := base + "*?[x]"
			s, err := New(rdb, Options{Prefix: prefix})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			old := []string{"carol:1", "carol%}{2", "dave:1"}
			for _, th := range old {
				pendingWrite(t, s, th)
				// As an older version left it: not in the index.
				if err := rdb.ZRem(ctx, s.d.threadsKey(), th).Err(); err != nil {
					t.Fatal(err)
				}
			}
			// Keys of another prefix that the glob would match unescaped.
			other, err := New(rdb, Options{Prefix: base + "zzqx"})
			if err != nil {
				t.Fatal(err)
			}
			defer other.Close()
			pendingWrite(t, other, "eve")
			want := slices.Sorted(slices.Values(old))
			if got := rowThreadIDs(t, s); !slices.Equal(got, want) {
				t.Fatalf("RowThreadIDs = %q, want %q", got, want)
			}
			if n, err := rdb.Exists(ctx, s.d.indexedKey()).Result(); err != nil || n != 1 {
				t.Fatalf("the mark: %d, %v", n, err)
			}
			// Marked: a new saver does not scan again.
			if err := rdb.ZRem(ctx, s.d.threadsKey(), "dave:1").Err(); err != nil {
				t.Fatal(err)
			}
			s2, err := New(rdb, Options{Prefix: prefix})
			if err != nil {
				t.Fatal(err)
			}
			defer s2.Close()
			if got := rowThreadIDs(t, s2); !slices.Equal(got, want[:2]) {
				t.Fatalf("with the mark set, RowThreadIDs = %q, want %q (no second scan)", got, want[:2])
			}
		})
	}
}
