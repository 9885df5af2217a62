package cache_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/memvault/memvault/store"
	"github.com/memvault/memvault/store/cache"
	"github.com/memvault/memvault/store/memstore"
	"github.com/memvault/memvault/store/storetest"
)

type fixture struct {
	inner *memstore.Store
	c     cache.Cache
	clock *storetest.Clock
	ctx   context.Context
}

func newFixture(t *testing.T, ttl *store.TTLConfig, opt cache.Options) *fixture {
	t.Helper()
	clock := storetest.NewClock()
	inner, err := memstore.New(memstore.Options{TTL: ttl, Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	opt.Now = clock.Now
	c, err := cache.New(inner, opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &fixture{inner: inner, c: c, clock: clock, ctx: context.Background()}
}

func (f *fixture) get(t *testing.T, key string, opts ...store.GetOption) *store.Item {
	t.Helper()
	it, err := f.c.Get(f.ctx, store.Namespace{"n"}, key, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return it
}

func (f *fixture) wantStats(t *testing.T, hits, misses uint64) {
	t.Helper()
	if s := f.c.Stats(); s.Hits != hits || s.Misses != misses {
		t.Fatalf("stats = %+v, want %d hits, %d misses", s, hits, misses)
	}
}

var ns = store.Namespace{"n"}

func TestHitsAndMisses(t *testing.T) {
	f := newFixture(t, nil, cache.Options{})
	if err := f.c.Put(f.ctx, ns, "k", map[string]any{"v": 1}); err != nil {
		t.Fatal(err)
	}
	f.get(t, "k")
	f.wantStats(t, 0, 1)
	it := f.get(t, "k")
	f.wantStats(t, 1, 1)
	if it.Value["v"] != int64(1) {
		t.Fatalf("cached value %v", it.Value)
	}
	// Mutating a returned item does not reach the cache.
	it.Value["v"] = 2
	if got := f.get(t, "k").Value["v"]; got != int64(1) {
		t.Fatalf("cache aliased a returned value: %v", got)
	}
}

func TestNegativeResultsCachedAndInvalidated(t *testing.T) {
	f := newFixture(t, nil, cache.Options{})
	// The first read misses and caches the absence; the second is a hit.
	first, second := f.get(t, "k"), f.get(t, "k")
	if first != nil || second != nil {
		t.Fatal("absent item found")
	}
	f.wantStats(t, 1, 1)
	if err := f.c.Put(f.ctx, ns, "k", map[string]any{"v": 1}); err != nil {
		t.Fatal(err)
	}
	if f.get(t, "k") == nil {
		t.Fatal("put not visible: the negative entry was not invalidated")
	}
}

func TestInvalidation(t *testing.T) {
	f := newFixture(t, nil, cache.Options{})
	put := func(v int) {
		if err := f.c.Put(f.ctx, ns, "k", map[string]any{"v": v}); err != nil {
			t.Fatal(err)
		}
	}
	put(1)
	f.get(t, "k")
	put(2)
	if got := f.get(t, "k").Value["v"]; got != int64(2) {
		t.Fatalf("after Put: %v", got)
	}
	if err := f.c.Delete(f.ctx, ns, "k"); err != nil {
		t.Fatal(err)
	}
	if it := f.get(t, "k"); it != nil {
		t.Fatalf("after Delete: %v", it)
	}
	if _, err := f.c.Batch(f.ctx, []store.Op{store.PutOp{Namespace: ns, Key: "k", Value: map[string]any{"v": 3}}}); err != nil {
		t.Fatal(err)
	}
	if got := f.get(t, "k").Value["v"]; got != int64(3) {
		t.Fatalf("after Batch put: %v", got)
	}
	if _, err := f.c.Batch(f.ctx, []store.Op{store.PutOp{Namespace: ns, Key: "k"}}); err != nil {
		t.Fatal(err)
	}
	if it := f.get(t, "k"); it != nil {
		t.Fatalf("after Batch delete: %v", it)
	}
}

// TestMaxAgeBoundsStaleness writes behind the cache's back, as another
// process would.
func TestMaxAgeBoundsStaleness(t *testing.T) {
	f := newFixture(t, nil, cache.Options{MaxAge: 10 * time.Second})
	if err := f.inner.Put(f.ctx, ns, "k", map[string]any{"v": 1}); err != nil {
		t.Fatal(err)
	}
	f.get(t, "k")
	if err := f.inner.Put(f.ctx, ns, "k", map[string]any{"v": 2}); err != nil {
		t.Fatal(err)
	}
	f.clock.Advance(9 * time.Second)
	if got := f.get(t, "k").Value["v"]; got != int64(1) {
		t.Fatalf("within MaxAge the cached value is served, got %v", got)
	}
	f.clock.Advance(time.Second)
	if got := f.get(t, "k").Value["v"]; got != int64(2) {
		t.Fatalf("after MaxAge the inner value is served, got %v", got)
	}
}

func TestTTLItems(t *testing.T) {
	f := newFixture(t, &store.TTLConfig{SweepInterval: -1}, cache.Options{MaxAge: time.Hour})
	if err := f.c.Put(f.ctx, ns, "k", map[string]any{}, store.WithTTL(10*time.Minute)); err != nil {
		t.Fatal(err)
	}
	f.get(t, "k")
	f.get(t, "k") // refreshing read: must reach the inner store
	f.wantStats(t, 0, 2)
	f.get(t, "k", store.WithRefreshTTL(false))
	f.wantStats(t, 1, 2)
	f.clock.Advance(11 * time.Minute)
	if it := f.get(t, "k", store.WithRefreshTTL(false)); it != nil {
		t.Fatal("expired item served from the cache")
	}
	f.wantStats(t, 1, 3)
}

func TestEviction(t *testing.T) {
	f := newFixture(t, nil, cache.Options{Size: 2})
	for i := range 5 {
		f.get(t, fmt.Sprint(i))
	}
	if n := f.c.Stats().Entries; n != 2 {
		t.Fatalf("%d entries in a cache of 2", n)
	}
}

// TestNoStaleFillAfterConcurrentWrites races readers filling the cache
// against writers; once the writers are done every reader must see the
// last write (a fill that started before a write must not survive it).
func TestNoStaleFillAfterConcurrentWrites(t *testing.T) {
	f := newFixture(t, nil, cache.Options{MaxAge: time.Hour})
	for round := range 50 {
		var wg sync.WaitGroup
		for r := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range 20 {
					if _, err := f.c.Get(f.ctx, ns, "k"); err != nil {
						t.Error(err)
					}
				}
				_ = r
			}()
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 20 {
				if err := f.c.Put(f.ctx, ns, "k", map[string]any{"round": round, "i": i}); err != nil {
					t.Error(err)
				}
			}
		}()
		wg.Wait()
		it := f.get(t, "k")
		if it.Value["round"] != int64(round) || it.Value["i"] != int64(19) {
			t.Fatalf("round %d: stale value %v after the last write", round, it.Value)
		}
	}
}

// plain hides the inner store's optional interfaces.
type plain struct{ store.Store }

func TestOptionsAndLifecycle(t *testing.T) {
	inner, err := memstore.New(memstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cache.New(inner, cache.Options{Size: -1}); !errors.Is(err, store.ErrInvalidArgument) {
		t.Fatalf("negative size: %v", err)
	}
	if _, err := cache.New(nil, cache.Options{}); !errors.Is(err, store.ErrInvalidArgument) {
		t.Fatalf("nil inner: %v", err)
	}
	c, err := cache.New(plain{inner}, cache.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := c.(store.Sweeper); ok {
		t.Fatal("a cache of a store without Sweep offers Sweep")
	}
	c2, _ := cache.New(inner, cache.Options{})
	if err := c2.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := inner.Get(context.Background(), ns, "k"); !errors.Is(err, store.ErrClosed) {
		t.Fatalf("Close did not close the inner store: %v", err)
	}
	if _, err := c2.Get(context.Background(), ns, "k"); !errors.Is(err, store.ErrClosed) {
		t.Fatalf("Get after Close: %v", err)
	}
}

// pausingGet lets a test stop an inner Get after it has read the item.
type pausingGet struct {
	store.Store
	read, resume chan struct{}
}

func (p *pausingGet) Get(ctx context.Context, ns store.Namespace, key string, opts ...store.GetOption) (*store.Item, error) {
	it, err := p.Store.Get(ctx, ns, key, opts...)
	if p.read != nil {
		p.read <- struct{}{}
		<-p.resume
	}
	return it, err
}

// TestFillRacingWriteIsDropped interleaves deterministically: a Get reads
// the old item from the inner store, a Put completes, then the Get tries to
// cache what it read. The old item must not be cached.
func TestFillRacingWriteIsDropped(t *testing.T) {
	inner, err := memstore.New(memstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	p := &pausingGet{Store: inner}
	c, err := cache.New(p, cache.Options{MaxAge: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	if err := c.Put(ctx, ns, "k", map[string]any{"v": "old"}); err != nil {
		t.Fatal(err)
	}
	p.read, p.resume = make(chan struct{}), make(chan struct{})
	done := make(chan *store.Item)
	go func() {
		it, _ := c.Get(ctx, ns, "k")
		done <- it
	}()
	<-p.read // the racing Get has read "old"
	if err := c.Put(ctx, ns, "k", map[string]any{"v": "new"}); err != nil {
		t.Fatal(err)
	}
	close(p.resume)
	if it := <-done; it.Value["v"] != "old" {
		t.Fatalf("racing Get returned %v", it.Value)
	}
	p.read = nil
	if it, _ := c.Get(ctx, ns, "k"); it.Value["v"] != "new" {
		t.Fatalf("the racing Get cached a stale item: %v", it.Value)
	}
}
