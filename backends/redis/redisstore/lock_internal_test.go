package redisstore

import (
	"context"
	"errors"
	"testing"
	"time"

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
	const lease = 60 * time.Millisecond
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
	for range 5 {
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
