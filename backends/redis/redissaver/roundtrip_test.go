package redissaver_test

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/memvault/memvault/backends/redis/redissaver"
	"github.com/memvault/memvault/backends/redis/redistest"
	"github.com/memvault/memvault/checkpointer"
)

// tripCounter is a go-redis hook counting round trips to the server: a
// command is one, a pipeline or MULTI block is one; each trip's command
// names are kept so a failure says what went over the wire.
type tripCounter struct {
	mu    sync.Mutex
	trips []string
}

func (c *tripCounter) DialHook(next redis.DialHook) redis.DialHook { return next }

func (c *tripCounter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		c.add(cmd.Name())
		return next(ctx, cmd)
	}
}

func (c *tripCounter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		names := make([]string, len(cmds))
		for i, cmd := range cmds {
			names[i] = cmd.Name()
		}
		c.add(strings.Join(names, "+"))
		return next(ctx, cmds)
	}
}

func (c *tripCounter) add(s string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.trips = append(c.trips, s)
}

// count runs fn and returns the round trips it made.
func (c *tripCounter) count(fn func()) []string {
	c.mu.Lock()
	c.trips = nil
	c.mu.Unlock()
	fn()
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.trips
}

// TestRoundTrips counts the round trips of the hot operations on a real
// server, once the scripts are loaded: a put and a task's pending writes
// are one each (one script, which on one server also indexes the thread); a
// read of a checkpoint this Saver wrote or read before is one MULTI
// (record, parent, head, writes and the values the head it knows
// references; the head's stamp tells they are its values), the latest
// two (its id, then that MULTI), as the raw go-redis baseline of the
// bench. Before, every read took two MULTIs after the id.
func TestRoundTrips(t *testing.T) {
	srv := redistest.Shared(t, 8)
	base := srv.Client(t)
	rdb := redis.NewClient(&redis.Options{Addr: base.Options().Addr, ContextTimeoutEnabled: true})
	t.Cleanup(func() { _ = rdb.Close() })
	c := &tripCounter{}
	rdb.AddHook(c)
	s, err := redissaver.New(rdb, redissaver.Options{Prefix: redistest.Prefix()})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	cfg := checkpointer.Config{ThreadID: "trips"}
	put := func(n int) {
		cp := newCheckpoint(s, n)
		next, err := s.Put(ctx, cfg, cp, checkpointer.Metadata{"step": n}, cp.ChannelVersions)
		if err != nil {
			t.Fatal(err)
		}
		cfg = next
	}
	// Warm up: the first put of a thread indexes it again and loads
	// the scripts; the first reads load theirs.
	for n := range 3 {
		put(n)
	}
	if err := s.PutWrites(ctx, cfg, []checkpointer.Write{{Channel: "out", Value: "x"}}, "warm", ""); err != nil {
		t.Fatal(err)
	}
	if _, err := s.GetTuple(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	latest := checkpointer.Config{ThreadID: "trips"}
	if _, err := s.GetTuple(ctx, latest); err != nil {
		t.Fatal(err)
	}

	check := func(op string, want int, fn func()) {
		t.Helper()
		if trips := c.count(fn); len(trips) != want {
			t.Errorf("%s: %d round trips, want %d: %q", op, len(trips), want, trips)
		}
	}
	check("put", 1, func() { put(3) })
	check("put_writes", 1, func() {
		if err := s.PutWrites(ctx, cfg, []checkpointer.Write{{Channel: "out", Value: "y"}}, "task", ""); err != nil {
			t.Fatal(err)
		}
	})
	check("get_tuple by id", 1, func() {
		tup, err := s.GetTuple(ctx, cfg)
		if err != nil || tup == nil || len(tup.PendingWrites) != 1 || tup.Checkpoint.ChannelValues["step"] != float64(3) {
			t.Fatalf("get_tuple: %+v, %v", tup, err)
		}
	})
	check("get_tuple latest", 2, func() {
		tup, err := s.GetTuple(ctx, latest)
		if err != nil || tup == nil || tup.Config.CheckpointID != cfg.CheckpointID || len(tup.PendingWrites) != 1 {
			t.Fatalf("get_tuple latest: %+v, %v", tup, err)
		}
	})
}

// TestReadSeesRewriteByAnother reads a checkpoint this Saver wrote after
// another Saver (another process) wrote it again with another channel
// version, then removed it: the read must return the new value, then
// nothing, not what the first Saver remembers of its own put.
func TestReadSeesRewriteByAnother(t *testing.T) {
	srv := redistest.Shared(t, 8)
	prefix := redistest.Prefix()
	a, err := redissaver.New(srv.Client(t), redissaver.Options{Prefix: prefix})
	if err != nil {
		t.Fatal(err)
	}
	b, err := redissaver.New(srv.Client(t), redissaver.Options{Prefix: prefix})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	cp := newCheckpoint(a, 1)
	cfg, err := a.Put(ctx, checkpointer.Config{ThreadID: "rewrite"}, cp, checkpointer.Metadata{}, cp.ChannelVersions)
	if err != nil {
		t.Fatal(err)
	}
	if tup, err := a.GetTuple(ctx, cfg); err != nil || tup.Checkpoint.ChannelValues["step"] != float64(1) {
		t.Fatalf("first read: %+v, %v", tup, err)
	}
	again := newCheckpoint(b, 2)
	again.ID = cp.ID
	if _, err := b.Put(ctx, checkpointer.Config{ThreadID: "rewrite"}, again, checkpointer.Metadata{}, again.ChannelVersions); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		tup, err := a.GetTuple(ctx, cfg)
		if err != nil || tup == nil || tup.Checkpoint.ChannelValues["step"] != float64(2) {
			t.Fatalf("read after the other Saver's put: %+v, %v", tup, err)
		}
	}
	if err := b.DeleteThread(ctx, "rewrite"); err != nil {
		t.Fatal(err)
	}
	if tup, err := a.GetTuple(ctx, cfg); err != nil || tup != nil {
		t.Fatalf("read after the other Saver's deletion: %+v, %v", tup, err)
	}
}

// TestListAcrossThreadsRoundTrips: a listing across threads reads the
// ids of every thread in one pipeline (per 256 threads), not one request
// per thread. Counted with a go-redis hook on a real server: 40 threads,
// listed with and without a limit and with a limit a thread fills (which
// also reads the last id's other namespaces).
func TestListAcrossThreadsRoundTrips(t *testing.T) {
	srv := redistest.Shared(t, 8)
	base := srv.Client(t)
	rdb := redis.NewClient(&redis.Options{Addr: base.Options().Addr, ContextTimeoutEnabled: true})
	t.Cleanup(func() { _ = rdb.Close() })
	c := &tripCounter{}
	rdb.AddHook(c)
	s, err := redissaver.New(rdb, redissaver.Options{Prefix: redistest.Prefix()})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	const threads = 40
	for th := range threads {
		cfg := checkpointer.Config{ThreadID: "list-" + strconv.Itoa(th)}
		for n := range 2 {
			cp := newCheckpoint(s, n)
			if cfg, err = s.Put(ctx, cfg, cp, checkpointer.Metadata{"step": n}, cp.ChannelVersions); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, limit := range []int{0, 3, 2} {
		var got int
		trips := c.count(func() {
			for _, err := range s.List(ctx, nil, checkpointer.ListOptions{Limit: limit}) {
				if err != nil {
					t.Fatal(err)
				}
				got++
			}
		})
		if want := limit; limit == 0 && got != 2*threads || limit > 0 && got != want {
			t.Fatalf("limit %d: listed %d checkpoints", limit, got)
		}
		idReads := 0
		for _, trip := range trips {
			if strings.Contains(trip, "zrevrangebylex") {
				idReads++
			}
		}
		if idReads != 1 {
			t.Errorf("limit %d: the ids of %d threads read in %d round trips, want 1: %q", limit, threads, idReads, trips)
		}
	}
}

// TestListAcrossThreadsLoadsPages: a listing across threads whose
// checkpoints interleave (each thread's ids between other threads') reads
// the records of up to 64 checkpoints of any threads per round trip on
// one server, each listed with its own thread's values.
func TestListAcrossThreadsLoadsPages(t *testing.T) {
	srv := redistest.Shared(t, 8)
	base := srv.Client(t)
	rdb := redis.NewClient(&redis.Options{Addr: base.Options().Addr, ContextTimeoutEnabled: true})
	t.Cleanup(func() { _ = rdb.Close() })
	c := &tripCounter{}
	rdb.AddHook(c)
	s, err := redissaver.New(rdb, redissaver.Options{Prefix: redistest.Prefix()})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	const threads = 40
	cfgs := make([]checkpointer.Config, threads)
	for n := range 2 {
		for th := range threads {
			if n == 0 {
				cfgs[th] = checkpointer.Config{ThreadID: "page-" + strconv.Itoa(th)}
			}
			cp := newCheckpoint(s, n)
			cp.ChannelValues["thread"] = cfgs[th].ThreadID
			cp.ChannelVersions["thread"] = cp.ChannelVersions["step"]
			if cfgs[th], err = s.Put(ctx, cfgs[th], cp, checkpointer.Metadata{"step": n}, cp.ChannelVersions); err != nil {
				t.Fatal(err)
			}
		}
	}
	var got int
	trips := c.count(func() {
		for tup, err := range s.List(ctx, nil, checkpointer.ListOptions{}) {
			if err != nil {
				t.Fatal(err)
			}
			if v := tup.Checkpoint.ChannelValues["thread"]; v != tup.Config.ThreadID {
				t.Fatalf("checkpoint %s of thread %s holds the values of %v", tup.Config.CheckpointID, tup.Config.ThreadID, v)
			}
			got++
		}
	})
	if got != 2*threads {
		t.Fatalf("listed %d checkpoints, want %d", got, 2*threads)
	}
	loads := 0
	for _, trip := range trips {
		if strings.Contains(trip, "hgetall") {
			loads++
		}
	}
	if loads > 2 {
		t.Errorf("the records of %d checkpoints of %d threads read in %d round trips, want 2 (64 a trip)", 2*threads, threads, loads)
	}
}
