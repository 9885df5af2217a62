package redissaver

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/checkpointer/engine"
	"github.com/memvault/memvault/serde"
)

// ErrRecord is wrapped by the errors of stored records the saver cannot
// read (written by something else under its prefix, or damaged).
var ErrRecord = errors.New("redis: unreadable record")

// ErrOptions is wrapped by the error of unusable Options.
var ErrOptions = errors.New("redis: invalid options")

// DefaultPrefix is the key prefix when Options.Prefix is "".
const DefaultPrefix = "memvault:cp"

// DefaultLease is the lock lease when Options.Lease is 0.
const DefaultLease = 30 * time.Second

// Options configures a Saver. The zero value is ready to use.
type Options struct {
	// Prefix starts every key the saver writes (DefaultPrefix when "").
	// Savers with different prefixes share a server without seeing each
	// other. It may not hold '{' or '}' (the thread's hash tag follows it).
	Prefix string
	// Lease is how long a removal, copy, import or re-encryption holds a
	// thread's lock without renewing it (DefaultLease when 0). It is
	// renewed every Lease/3 while the operation runs, so it only matters
	// when the process dies or stalls: the thread's writers wait at most
	// that long.
	Lease time.Duration
	// ReturnOnCancel makes reads, listings, puts and pending writes
	// return as soon as their context is cancelled, even while the server
	// has not answered: each such call then runs its commands in a
	// goroutine of its own (about 25 µs of CPU and of latency per call on
	// a loaded 2-core machine, as much as a raw go-redis command) and
	// abandons it at the cancellation. By default they run in the
	// caller's goroutine, as a go-redis command does, and a cancelled call
	// ends as a go-redis command ends: when the server answers, at the
	// context's deadline (clients created with ContextTimeoutEnabled) or
	// at the client's ReadTimeout (3 s by default) — go-redis does not
	// watch a cancellation. Removals, copies, imports and re-encryption
	// stop at their next command either way.
	ReturnOnCancel bool
	// Serde encodes channel values and pending writes (engine.Options).
	Serde serde.Serializer
	// StringVersions makes NextVersion write Python's string versions.
	// Default: integers.
	StringVersions bool
	// Retention, SweepInterval, OnSweep and SweepBatch are
	// engine.Options'.
	Retention     checkpointer.RetentionPolicy
	SweepInterval time.Duration
	OnSweep       func(checkpointer.SweepReport, error)
	SweepBatch    int
}

// Saver is a checkpointer over a Redis server or cluster, in memvault's
// own layout (see the package doc). It is safe for concurrent use, and
// several processes may share one prefix.
type Saver struct {
	*engine.Saver
	d *driver
}

// New returns a Saver storing under opt.Prefix through rdb: a
// *redis.Client, a *redis.ClusterClient or any other UniversalClient.
// With a serializer keeping per-subject keys (keys.Hierarchy) it must be
// a *redis.Client or a *redis.ClusterClient: the erasure fence needs each
// thread's script to reach its own slot's fence key, which a *redis.Ring
// (sharding by key name on the client) does not ensure, so New refuses
// any other client then (ErrOptions). Nothing needs setting up on the
// server; the Saver does not close rdb.
func New(rdb redis.UniversalClient, opt Options) (*Saver, error) {
	if rdb == nil {
		return nil, fmt.Errorf("%w: no client", ErrOptions)
	}
	if err := checkFencedClient(rdb, opt.Serde); err != nil {
		return nil, err
	}
	prefix := opt.Prefix
	if prefix == "" {
		prefix = DefaultPrefix
	}
	if strings.ContainsAny(prefix, "{}") {
		return nil, fmt.Errorf("%w: prefix %q holds '{' or '}'", ErrOptions, prefix)
	}
	lease := opt.Lease
	if lease == 0 {
		lease = DefaultLease
	}
	if lease < 30*time.Millisecond {
		return nil, fmt.Errorf("%w: lease %v is shorter than 30ms", ErrOptions, lease)
	}
	d := newDriver(rdb, prefix, lease)
	d.inline = !opt.ReturnOnCancel
	style := checkpointer.VersionInt
	if opt.StringVersions {
		style = checkpointer.VersionString
	}
	e, err := engine.New(d, engine.Options{Serde: opt.Serde, VersionStyle: style, Retention: opt.Retention,
		SweepInterval: opt.SweepInterval, OnSweep: opt.OnSweep, SweepBatch: opt.SweepBatch})
	if err != nil {
		return nil, err
	}
	return &Saver{Saver: e, d: d}, nil
}

// subjectKeys is a serializer sealing each data subject's values under
// the subject's own keys (keys.Hierarchy): the method by which the
// engine's codec tells one (internal/binding.SubjectKeys), whose writes
// carry an erasure fence.
type subjectKeys interface {
	ThreadKeySubject(ctx context.Context, thread string) (string, error)
}

// checkFencedClient refuses a client the erasure fence cannot work
// through when sd keeps per-subject keys: on a *redis.Ring (or a client
// of another type, whose routing the saver cannot know) the fence key
// "<prefix>:fence" lives on the shard its name hashes to, while a
// thread's script reads that name on the thread's shard, where
// DrainWrites never sets it: a write that checked a key before its
// erasure would be stored after it (TestReviewS26RingClientErasure).
func checkFencedClient(rdb redis.UniversalClient, sd serde.Serializer) error {
	if _, ok := sd.(subjectKeys); !ok {
		return nil
	}
	switch rdb.(type) {
	case *redis.Client, *redis.ClusterClient:
		return nil
	}
	return fmt.Errorf("%w: per-subject keys need a *redis.Client or a *redis.ClusterClient for the erasure fence, not a %T", ErrOptions, rdb)
}

// newDriver is the driver of a Saver (New checked the options).
func newDriver(rdb redis.UniversalClient, prefix string, lease time.Duration) *driver {
	_, single := rdb.(*redis.Client)
	return &driver{rdb: rdb, prefix: prefix, lease: lease, fc: newFenceCache(rdb, prefix), stampBase: newToken() + ".", single: single, bigPut: bigPut, bigWrites: bigWrites,
		threadsK: prefix + ":threads"}
}

// DrainWrites makes every write of a data subject's values that checked
// its keys before now fail, in any process, unless its script already ran:
// it sets the fence keys every such script checks to a fresh random token
// (one key on a single server, one per slot on a cluster; see the package
// doc). An erasure calls it after destroying the subject's keys
// (vault.Handle calls it through ForgetWith), so that the threads it then
// deletes hold every write that found those keys live, and no write
// sealed with them lands afterwards.
func (s *Saver) DrainWrites(ctx context.Context) error {
	if err := s.d.fc.drain(ctx, s.d.rdb); err != nil {
		return fmt.Errorf("redis: drain writes: %w", err)
	}
	return nil
}
