package redissaver

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/redis/go-redis/v9"

	"github.com/memvault/memvault/checkpointer/engine"
)

var _ engine.RowThreads = (*driver)(nil)

// RowThreads implements engine.RowThreads: the threads of the thread
// index after after, ascending, at most limit, that hold any key — a
// checkpoint, a value or pending writes. Since this version pending
// writes index their thread as a put does (putWrites), so a thread whose
// checkpoints are gone (a removal killed half-way) or were never stored
// (pending writes before the put) is among them, which Threads misses:
// an erasure (vault.Handle.Forget, through engine.Saver.RowThreadIDs)
// deletes it, and re-encryption reseals it. Each page of the index costs
// one pipeline of one EXISTS per thread (its fixed keys, one slot). The
// first call of a driver also indexes what older versions left out of
// the index (indexOlder), and each listing's first page (after "")
// checks that they still are.
func (d *driver) RowThreads(ctx context.Context, after string, limit int) ([]string, error) {
	return await(d.callCtx(ctx), func(ctx context.Context) ([]string, error) {
		if err := d.indexOlder(ctx, after == ""); err != nil {
			return nil, err
		}
		return d.rowThreads(ctx, after, limit)
	})
}

func (d *driver) rowThreads(ctx context.Context, after string, limit int) ([]string, error) {
	return d.indexPage(ctx, after, limit, d.holding)
}

// holding counts the keys each thread holds of its fixed ones (0: it
// holds no checkpoint, value or pending writes).
func (d *driver) holding(ctx context.Context, threads []string) ([]int64, error) {
	cmds := make([]*redis.IntCmd, len(threads))
	_, err := d.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, th := range threads {
			cmds[i] = p.Exists(ctx, d.keys(th).fixed()...)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("threads: %w", err)
	}
	out := make([]int64, len(threads))
	for i, c := range cmds {
		out[i] = c.Val()
	}
	return out, nil
}

// indexedKey marks that the threads older versions left out of the index
// are in it (indexOlder): "<prefix>:threads:complete".
func (d *driver) indexedKey() string { return d.prefix + ":threads:complete" }

// indexOlder adds to the thread index, once per prefix, every thread
// holding a key under the prefix: versions before this one indexed a
// thread at its first put only, so a thread holding only pending writes
// written by them (before any put, or after its checkpoints were removed)
// is not in the index, and RowThreads would miss it. It SCANs the
// prefix's thread keys ("<prefix>:{*", every master of a cluster), adds
// their threads, then sets indexedKey; a driver that finds indexedKey
// set does not scan again. Deleting indexedKey makes the next listing
// of each process scan again (after a process of an older version wrote
// pending writes meanwhile): first (a listing's first page) looks at
// indexedKey whatever this driver did before — one EXISTS a listing —,
// and only the later pages of a listing trust olderIndexed.
func (d *driver) indexOlder(ctx context.Context, first bool) error {
	if !first && d.olderIndexed.Load() {
		return nil
	}
	n, err := d.rdb.Exists(ctx, d.indexedKey()).Result()
	if err != nil {
		return fmt.Errorf("threads: %w", err)
	}
	if n == 0 {
		if err := d.scanThreads(ctx); err != nil {
			return fmt.Errorf("threads: indexing the threads of older versions: %w", err)
		}
		if err := d.rdb.Set(ctx, d.indexedKey(), "1", 0).Err(); err != nil {
			return fmt.Errorf("threads: %w", err)
		}
	}
	d.olderIndexed.Store(true)
	return nil
}

// scanThreads adds every thread holding a key under the prefix to the
// thread index.
func (d *driver) scanThreads(ctx context.Context) error {
	match := globEscape(d.prefix) + ":{*"
	scan := func(ctx context.Context, c *redis.Client) error {
		var cursor uint64
		for {
			ks, next, err := c.Scan(ctx, cursor, match, 1000).Result()
			if err != nil {
				return err
			}
			var zs []redis.Z
			seen := map[string]bool{}
			for _, k := range ks {
				if th, ok := d.threadOfKey(k); ok && !seen[th] {
					seen[th] = true
					zs = append(zs, redis.Z{Member: th})
				}
			}
			if len(zs) > 0 {
				if err := d.rdb.ZAdd(ctx, d.threadsKey(), zs...).Err(); err != nil {
					return err
				}
			}
			if cursor = next; cursor == 0 {
				return nil
			}
		}
	}
	switch c := d.rdb.(type) {
	case *redis.Client:
		return scan(ctx, c)
	case *redis.ClusterClient:
		return c.ForEachMaster(ctx, scan)
	case *redis.Ring:
		return c.ForEachShard(ctx, scan)
	}
	return fmt.Errorf("cannot scan the keys of a %T", d.rdb)
}

// threadOfKey is the thread of a key of the layout ("<prefix>:{tag}:…").
func (d *driver) threadOfKey(k string) (string, bool) {
	rest, ok := strings.CutPrefix(k, d.prefix+":{")
	if !ok {
		return "", false
	}
	t, _, ok := strings.Cut(rest, "}")
	if !ok {
		return "", false
	}
	return untag(t), true
}

// globEscape escapes the characters a SCAN MATCH pattern interprets.
func globEscape(s string) string {
	if !strings.ContainsAny(s, `*?[]\`) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`*?[]\`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// threadSet is a bounded set of thread ids: the threads a driver added to
// the thread index (driver.indexed). It is only a hint: a thread it names
// may have been deleted since, which the scripts that trust it detect.
type threadSet struct {
	mu sync.Mutex
	m  map[string]struct{}
}

// maxIndexed bounds a threadSet: past it, the set starts again empty.
const maxIndexed = 8192

func (s *threadSet) has(thread string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.m[thread]
	return ok
}

func (s *threadSet) add(thread string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil || len(s.m) >= maxIndexed {
		s.m = make(map[string]struct{})
	}
	s.m[thread] = struct{}{}
}

func (s *threadSet) forget(thread string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.m, thread)
}
