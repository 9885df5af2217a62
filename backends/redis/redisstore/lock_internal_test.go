package redisstore

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/memvault/memvault/backends/redis/redistest"
	"github.com/memvault/memvault/store"
)

func newTestDriver(t *testing.T) *driver {
	t.Helper()
	s, err := New(context.Background(), redistest.Shared(t, 8).Client(t), Options{Prefix: redistest.Prefix()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s.d
}

// TestCommitAfterLostLease: a write transaction whose lock was taken over
// (its lease ran out; here the key is replaced by another token) fails at
// Commit with ErrLeaseLost and writes none of its changes.
func TestCommitAfterLostLease(t *testing.T) {
	ctx := context.Background()
	d := newTestDriver(t)
	tx, err := d.Begin(ctx, true)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	for _, k := range []string{"a", "b"} {
		if err := tx.Put(ctx, store.RowWrite{Row: store.Row{RowKey: store.RowKey{NS: "n", Key: k}, Value: []byte(`{}`), Created: now, Updated: now}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.rdb.Set(ctx, d.k.lock, "another", time.Minute).Err(); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); !errors.Is(err, ErrLeaseLost) {
		t.Fatalf("Commit after the lock was taken over: %v, want ErrLeaseLost", err)
	}
	if n, err := d.rdb.Exists(ctx, d.k.lex, d.k.meta, d.k.items+"n\x00a", d.k.items+"n\x00b").Result(); err != nil || n != 0 {
		t.Fatalf("keys written by the failed commit: %d, %v", n, err)
	}
	if v, _ := d.rdb.Get(ctx, d.k.lock).Result(); v != "another" {
		t.Fatalf("the failed commit touched the other holder's lock: %q", v)
	}
}

// TestBeginHonoursContext: a write transaction waiting for the lock
// another holds gives up when its context ends, and the lock's holder is
// unaffected.
func TestBeginHonoursContext(t *testing.T) {
	ctx := context.Background()
	d := newTestDriver(t)
	if err := d.rdb.Set(ctx, d.k.lock, "another process", time.Minute).Err(); err != nil {
		t.Fatal(err)
	}
	cctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		_, err := d.Begin(cctx, true)
		done <- err
	}()
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("Begin with a cancelled context: %v, want context.Canceled", err)
	}
	// The process's own queue is free again: once the lock is released a
	// write transaction begins.
	if err := d.rdb.Del(ctx, d.k.lock).Err(); err != nil {
		t.Fatal(err)
	}
	tx, err := d.Begin(ctx, true)
	if err != nil {
		t.Fatal(err)
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	if n, _ := d.rdb.Exists(ctx, d.k.lock).Result(); n != 0 {
		t.Fatal("Rollback left the lock held")
	}
}

// TestLeaseRenewed: a write transaction that runs longer than its lease
// (a batch embedding many vectors on a loaded machine) keeps the lock —
// another writer cannot take it meanwhile — and commits; the renewal
// never takes back a lock another holder took over.
func TestLeaseRenewed(t *testing.T) {
	ctx := context.Background()
	// Renewed every third of it: a lease of 60 ms lost its renewals on a
	// loaded 2-core machine (the renewer starved for 40 ms); three
	// seconds leave a renewer 2 s of starvation (a -race GC pause, a busy
	// CI) before the test could fail. A renewer that never renews still
	// loses the lock within the first sleep.
	const lease = 3 * time.Second
	s, err := New(ctx, redistest.Shared(t, 8).Client(t), Options{Prefix: redistest.Prefix(), Lease: lease})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	d := s.d
	tx, err := d.Begin(ctx, true)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	row := store.RowWrite{Row: store.Row{RowKey: store.RowKey{NS: "n", Key: "a"}, Value: []byte(`{}`), Created: now, Updated: now}}
	if err := tx.Put(ctx, row); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		time.Sleep(lease)
		if ok, err := d.rdb.SetNX(ctx, d.k.lock, "another", time.Minute).Result(); err != nil || ok {
			t.Fatalf("another writer took the lock of a running transaction past its lease (%v)", err)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatalf("Commit of a transaction that outlived its lease: %v", err)
	}
	if it, err := s.Get(ctx, store.Namespace{"n"}, "a"); err != nil || it == nil {
		t.Fatalf("the committed row: %v, %v", it, err)
	}

	tx, err = d.Begin(ctx, true)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.rdb.Set(ctx, d.k.lock, "another", 0).Err(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(lease) // renewals run and must leave the other holder's lock alone
	if ttl, err := d.rdb.PTTL(ctx, d.k.lock).Result(); err != nil || ttl >= 0 {
		t.Fatalf("the renewal extended another holder's lock: TTL %v, %v", ttl, err)
	}
	if err := tx.Commit(); !errors.Is(err, ErrLeaseLost) {
		t.Fatalf("Commit after the lock was taken over: %v, want ErrLeaseLost", err)
	}
	_ = d.rdb.Del(ctx, d.k.lock)
}

// evalRecorder records the arguments of the commit script's runs.
type evalRecorder struct {
	mu   sync.Mutex
	args [][]any
}

func (r *evalRecorder) DialHook(next redis.DialHook) redis.DialHook { return next }

func (r *evalRecorder) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if a := cmd.Args(); len(a) > 1 && a[0] == "evalsha" && a[1] == commitScript.Hash() {
			r.mu.Lock()
			r.args = append(r.args, slices.Clone(a))
			r.mu.Unlock()
		}
		return next(ctx, cmd)
	}
}

func (r *evalRecorder) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// TestCommitSentAgain: go-redis sends a command again when its reply is
// late (past the client's ReadTimeout: a large commit on a loaded
// server); a commit script run again after it committed succeeds and
// changes nothing — the transaction did commit — where it failed with
// ErrLeaseLost, whose doc says nothing was written. Here the second run
// comes after another transaction deleted one of the items.
func TestCommitSentAgain(t *testing.T) {
	ctx := context.Background()
	srv := redistest.Shared(t, 7)
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr})
	t.Cleanup(func() { _ = rdb.Close() })
	rec := &evalRecorder{}
	rdb.AddHook(rec)
	s, err := New(ctx, rdb, Options{Prefix: redistest.Prefix()})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ns := store.Namespace{"n"}
	if _, err := s.Batch(ctx, []store.Op{store.PutOp{Namespace: ns, Key: "a", Value: map[string]any{"x": 1}},
		store.PutOp{Namespace: ns, Key: "b", Value: map[string]any{"x": 2}}}); err != nil {
		t.Fatal(err)
	}
	rec.mu.Lock()
	if len(rec.args) != 1 {
		t.Fatalf("%d commit scripts for one batch", len(rec.args))
	}
	again := rec.args[0]
	rec.mu.Unlock()
	if err := s.Delete(ctx, ns, "a"); err != nil {
		t.Fatal(err)
	}
	n, err := rdb.Do(ctx, again...).Int()
	if err != nil || n != 1 {
		t.Fatalf("the commit script sent again: %d, %v; want 1 (committed)", n, err)
	}
	if it, err := s.Get(ctx, ns, "a"); err != nil || it != nil {
		t.Fatalf("the commit sent again put back a deleted item: %v, %v", it, err)
	}
	if it, err := s.Get(ctx, ns, "b"); err != nil || it == nil {
		t.Fatalf("item b: %v, %v", it, err)
	}
	if v, err := rdb.Exists(ctx, s.d.k.lock).Result(); err != nil || v != 0 {
		t.Fatalf("the lock after the commit sent again: %d, %v", v, err)
	}
}
