package redissaver

import (
	"context"
	"strconv"
	"strings"
	"sync"

	"github.com/redis/go-redis/v9"

	"github.com/memvault/memvault/checkpointer"
)

// The erasure fence on Redis.
//
// A write of a data subject's values checks, through its WriteFence, that
// the keys that sealed them are still live (the key table lives outside
// Redis); an erasure destroys the keys, then drains the writes that
// checked before (DrainWrites), then deletes the subject's threads. The
// check and the write's script are two steps, so a write that checked a
// key just before its destruction could run its script after the
// erasure's deletion, in any process, and store a value of the erased
// subject. The fence closes that gap with a token in Redis:
//
//   - Every slot of the keyspace has a fence key (one key on a single
//     server; on a cluster one key per slot, named so that it hashes to
//     that slot, hence reachable from a thread's script).
//   - A fenced write reads the token it last saw (a cache in this
//     process; "0" for a key not set yet) before it checks its keys, and its
//     script refuses (FENCED, changing nothing) unless the key still
//     holds that token; the write then takes the new token, checks its
//     keys again, and retries.
//   - DrainWrites sets every fence key to a fresh random token (128 bits).
//     A script that runs after it passes only with that token, hence with
//     a key check made after it — after the keys were destroyed — which
//     fails. A script that ran before is stored, and deleted by the
//     erasure that drains first and deletes after.
//
// The token is random rather than a counter because the fence key can go
// back in time while the data stays: a server restarted from an older
// snapshot (kill -9 with RDB persistence, AOF everysec) holds the value
// of that snapshot, and a counter incremented again from there would
// reach exactly a value a writer cached after the snapshot, letting that
// writer's script pass after the next erasure
// (TestReviewS26FenceRolledBackByRestart). A fresh token never repeats,
// so no cached value matches once an erasure ran. What a rollback can
// still undo is the erasure's own token with its deletions, when the
// server loses them both (then the erased data is back anyway: the
// erasure must be run again).

// slots is the number of Redis Cluster hash slots.
const slots = 16384

// fenceCache is what this process last saw of the fence counters, with a
// generation that changes whenever any of it does.
type fenceCache struct {
	cluster bool
	prefix  string
	mu      sync.Mutex
	gen     uint64
	seen    map[int]string // by slot (always 0 on a single server); absent: "0"
	tags    func() []string
}

func newFenceCache(rdb redis.UniversalClient, prefix string) *fenceCache {
	_, cluster := rdb.(*redis.ClusterClient)
	return &fenceCache{cluster: cluster, prefix: prefix, seen: map[int]string{}, tags: sync.OnceValue(slotTags)}
}

// slot is the fence slot of a thread's keys: 0 on a single server.
func (f *fenceCache) slot(k keys) int {
	if f == nil || !f.cluster {
		return 0
	}
	return keySlot(k.lock)
}

// key is the fence key of slot.
func (f *fenceCache) key(slot int) string {
	if !f.cluster {
		return f.prefix + ":fence"
	}
	return f.prefix + ":fence:{" + f.tags()[slot] + "}"
}

// generation is the cache's generation: read it before checking keys.
func (f *fenceCache) generation() uint64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.gen
}

// get returns the token last seen for slot and the generation.
func (f *fenceCache) get(slot int) (string, uint64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	v, ok := f.seen[slot]
	if !ok {
		v = noFence
	}
	return v, f.gen
}

// noFence is what the scripts read for a fence key not set yet; a
// token (32 hex digits) never equals it.
const noFence = "0"

// saw records the token a refused script found for slot.
func (f *fenceCache) saw(slot int, v string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	old, ok := f.seen[slot]
	if !ok {
		old = noFence
	}
	if old != v {
		f.seen[slot] = v
		f.gen++
	}
}

// drain sets every fence key to one fresh random token (see
// DrainWrites): one SET on a single server, a pipeline of one SET per
// slot on a cluster.
func (f *fenceCache) drain(ctx context.Context, rdb redis.UniversalClient) error {
	tok := newToken()
	if !f.cluster {
		return rdb.Set(ctx, f.key(0), tok, 0).Err()
	}
	cmds, err := rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for s := range slots {
			p.Set(ctx, f.key(s), tok, 0)
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, c := range cmds {
		if c.Err() != nil {
			return c.Err()
		}
	}
	return nil
}

// fenced reports whether f may hold keys of a subject: a fence whose
// statements are known to be none (a serializer without per-subject keys)
// needs no check.
func fenced(f checkpointer.WriteFence) bool {
	if f == nil {
		return false
	}
	stmts, ok := f.Statements()
	return !ok || len(stmts) > 0
}

// fenceReply is the token of a FENCED reply ("0" for a key not set yet).
func fenceReply(r string) (string, bool) {
	return strings.CutPrefix(r, replyFenced)
}

// fences are the fences a write (or an Update's writes) must pass, and
// the cache generation they were checked at.
type fences struct {
	mu      sync.Mutex // an Update's writes may share them
	c       *fenceCache
	fs      []checkpointer.WriteFence
	checked bool
	gen     uint64
}

func (s *fences) add(f checkpointer.WriteFence) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if fenced(f) {
		s.fs = append(s.fs, f)
		s.checked = false
	}
}

// value checks the fences if needed — again when the cache changed since
// they were — and returns the token slot's script must find; ok is false
// when there is nothing to fence.
func (s *fences) value(ctx context.Context, slot int) (v string, ok bool, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.fs) == 0 {
		return "", false, nil
	}
	for {
		v, gen := s.c.get(slot)
		if s.checked && gen == s.gen {
			return v, true, nil
		}
		// The generation is read before the checks: a value cached
		// after them changes it, and they run again.
		s.gen = s.c.generation()
		for _, f := range s.fs {
			if err := f.Check(ctx); err != nil {
				return "", false, err
			}
		}
		s.checked = true
	}
}

// keySlot is the cluster hash slot of key (CRC16-XMODEM of its hash tag,
// or of the whole key without one, modulo 16384).
func keySlot(key string) int {
	if i := strings.IndexByte(key, '{'); i >= 0 {
		if j := strings.IndexByte(key[i+1:], '}'); j > 0 {
			key = key[i+1 : i+1+j]
		}
	}
	return int(crc16(key) % slots)
}

func crc16(s string) uint16 {
	var crc uint16
	for i := 0; i < len(s); i++ {
		crc ^= uint16(s[i]) << 8
		for range 8 {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
	}
	return crc
}

// slotTags returns, for every slot, a short hash tag that hashes to it.
func slotTags() []string {
	tags := make([]string, slots)
	left := slots
	for n := 0; left > 0; n++ {
		t := strconv.Itoa(n)
		if s := crc16(t) % slots; tags[s] == "" {
			tags[s] = t
			left--
		}
	}
	return tags
}
