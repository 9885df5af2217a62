package redissaver_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/memvault/memvault/backends/redis/redissaver"
	"github.com/memvault/memvault/backends/redis/redistest"
	"github.com/memvault/memvault/checkpointer"
)

// TestKill9KeepsAcknowledgedPuts: with appendonly yes and appendfsync
// always, kill -9 of the server while puts are in flight loses none of
// those it had acknowledged: after a restart every one is there, with its
// value and pending writes. "large" puts carry 8 KB more of values and
// writes 4 KB more, so they take the large path (a MULTI/EXEC with plain
// writes after a check; see the package doc).
func TestKill9KeepsAcknowledgedPuts(t *testing.T) {
	for _, c := range []struct {
		name string
		pad  int
	}{{"small", 0}, {"large", 8 << 10}} {
		for _, v := range redistest.Versions {
			t.Run(fmt.Sprintf("%s/redis%d", c.name, v), func(t *testing.T) { kill9(t, v, strings.Repeat("p", c.pad)) })
		}
	}
}

// TestKill9WithoutAOFLosesPuts is the control of
// TestKill9KeepsAcknowledgedPuts: the same kill -9 with Redis's defaults
// (no AOF) loses acknowledged puts, as the README says — so the kill test
// can fail, and appendonly is what keeps them.
func TestKill9WithoutAOFLosesPuts(t *testing.T) {
	lost, total := kill9Run(t, redistest.Versions[len(redistest.Versions)-1], "", false)
	if lost == 0 {
		t.Fatalf("kill -9 without AOF lost none of %d acknowledged puts; the README says it loses them", total)
	}
	t.Logf("without AOF, kill -9 lost %d of %d acknowledged puts", lost, total)
}

// kill9 is TestKill9KeepsAcknowledgedPuts on Redis v, with pad added to
// every put's values (and its first 4 KB to every write) when not empty.
func kill9(t *testing.T, v int, pad string) {
	lost, total := kill9Run(t, v, pad, true)
	if lost > 0 {
		t.Fatalf("%d of %d acknowledged puts (with their value and writes) lost by kill -9", lost, total)
	}
	t.Logf("%d acknowledged puts, all there after kill -9 and restart", total)
}

// kill9Run kills Redis v (with AOF and appendfsync always when aof) while
// puts are in flight, restarts it and returns how many acknowledged puts
// are lost of how many. Missing from a listing counts as an error when
// aof.
func kill9Run(t *testing.T, v int, pad string, aof bool) (lost, total int) {
	srv := redistest.StartT(t, redistest.Options{Version: v, AppendOnly: aof})
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr, MaxRetries: -1})
	s, err := redissaver.New(rdb, redissaver.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	const writers, enough = 4, 200
	var (
		mu    sync.Mutex
		acked = map[string][]string{} // thread -> checkpoint ids acknowledged
		wg    sync.WaitGroup
	)
	killed := make(chan struct{})
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cfg := checkpointer.Config{ThreadID: fmt.Sprintf("thread-%d", w)}
			for n := 0; ; n++ {
				cp := newCheckpoint(s, n)
				if pad != "" {
					cp.ChannelValues["pad"], cp.ChannelVersions["pad"] = pad, cp.ChannelVersions["step"]
				}
				next, err := s.Put(ctx, cfg, cp, checkpointer.Metadata{"step": n}, cp.ChannelVersions)
				if err != nil {
					return // the server is gone
				}
				out := []checkpointer.Write{{Channel: "out", Value: float64(n)}}
				if pad != "" {
					out[0].Value = pad[:4<<10]
				}
				if err := s.PutWrites(ctx, next, out, "task", ""); err != nil {
					return
				}
				mu.Lock()
				acked[cfg.ThreadID] = append(acked[cfg.ThreadID], cp.ID)
				total++
				if total == enough {
					srv.Kill() // kill -9 with the other writers' puts in flight
					close(killed)
				}
				mu.Unlock()
				cfg = next
			}
		}()
	}
	<-killed
	wg.Wait()
	_ = rdb.Close()
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	rdb = redis.NewClient(&redis.Options{Addr: srv.Addr})
	t.Cleanup(func() { _ = rdb.Close() })
	s, err = redissaver.New(rdb, redissaver.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for thread, ids := range acked {
		for _, id := range ids {
			tup, err := s.GetTuple(ctx, checkpointer.Config{ThreadID: thread, CheckpointID: id})
			if err != nil {
				t.Fatal(err)
			}
			if tup == nil || tup.Checkpoint.ChannelValues["step"] == nil || len(tup.PendingWrites) != 1 ||
				(pad != "" && tup.Checkpoint.ChannelValues["pad"] != pad) {
				lost++
				continue
			}
		}
		var listed []string
		for tup, err := range s.List(ctx, &checkpointer.Config{ThreadID: thread}, checkpointer.ListOptions{}) {
			if err != nil {
				t.Fatal(err)
			}
			listed = append(listed, tup.Config.CheckpointID)
		}
		for _, id := range ids {
			if aof && !slices.Contains(listed, id) {
				t.Errorf("thread %s: acknowledged checkpoint %s is not listed after the restart", thread, id)
			}
		}
	}
	return lost, total
}
