package mongosaver

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/memvault/memvault/backends/mongodb/internal/mongoindex"
	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/checkpointer/engine"
	"github.com/memvault/memvault/serde"
)

// ErrDocument is wrapped by the errors of documents the saver cannot read
// or write (a checkpoint type it does not read, malformed metadata).
var ErrDocument = errors.New("mongodb: unusable document")

// ErrTooLarge is wrapped by the error of a put or pending write whose
// document would exceed MaxDocumentSize even with its values moved out
// (big.go); nothing of it is stored.
var ErrTooLarge = errors.New("mongodb: document too large")

// MaxDocumentSize is MongoDB's limit on one BSON document (16 MiB).
const MaxDocumentSize = 16 << 20

// writeMargin is room left in a pending write's document for its ids and
// field names.
const writeMargin = 64 << 10

// Options configures a Saver. The zero value is ready to use.
type Options struct {
	// Serde encodes channel values and pending writes (engine.Options).
	Serde serde.Serializer
	// StringVersions makes NextVersion write Python PostgresSaver's
	// string versions. Default: integers, as Python's and JS's
	// MongoDBSaver write them.
	StringVersions bool
	// JSLayout writes each checkpoint's metadata as LangGraph.js's
	// MongoDBSaver does (one JSON binary, plus metadata_search), so that
	// JS reads and lists memvault's checkpoints; Python's MongoDBSaver then
	// cannot read them (it wants metadata as a document). Default:
	// Python's layout, which JS cannot read (it calls .value() on the
	// metadata). memvault reads both, in one collection, either way.
	// metadata_search is left out of a checkpoint whose metadata has no
	// exact BSON form (a key that cannot be a field name, in a map or a
	// list; an integer beyond int64; an array in an array; nesting over 90
	// levels): it is stored and read back all the same, but JS's
	// list(filter) does not match it.
	JSLayout bool
	// LeaseTTL is how long a thread's lease outlives a process that died
	// holding it (lease.go): the longest another process then waits.
	// Default 30s.
	LeaseTTL time.Duration
	// NoLeases turns the per-thread leases off: only for a database that
	// one process alone writes, where they serialize nothing the process
	// does not already (a thread's first write in a while takes its
	// lease, a round trip; later ones keep it, see sticky.go).
	NoLeases bool
	// DangerousAssumeSoleWriter promises that nothing but memvault savers
	// writes or deletes these collections — no Python or JS MongoDBSaver
	// (their deleteThread takes no lease), no TTL index, no script: then
	// a steady writer's put sends its document alone, one command instead
	// of a read and the document, trusting what its lease remembers of
	// the thread (putcache.go). Broken, the promise costs deleted data:
	// a put continuing a thread another program deleted copies the
	// deleted checkpoint's values into the new one, and the thread reads
	// again. Default off: every put reads first, and finds its parent gone
	// (checkpointer.ErrParentMissing).
	DangerousAssumeSoleWriter bool
	// Retention, SweepInterval, OnSweep and SweepBatch are
	// engine.Options'.
	Retention     checkpointer.RetentionPolicy
	SweepInterval time.Duration
	OnSweep       func(checkpointer.SweepReport, error)
	SweepBatch    int
}

// Saver is a checkpointer over two collections of a MongoDB database, in
// the layout of Python's MongoDBSaver (see the package doc). It is safe
// for concurrent use.
type Saver struct {
	*engine.Saver
	d       *driver
	sweeper *checkpointer.BackgroundSweeper
}

// New returns a Saver on db's "checkpoints" and "checkpoint_writes"
// collections (Python's defaults; its default database is
// "checkpointing_db"). Call Setup once to create the indexes.
func New(db *mongo.Database, opt Options) (*Saver, error) {
	d := newDriver(db)
	d.jsLayout = opt.JSLayout
	d.soleWriter = opt.DangerousAssumeSoleWriter
	d.leases = newLeaser(db, cmp.Or(opt.LeaseTTL, defaultLeaseTTL), opt.NoLeases)
	d.leases.cps, d.leases.writes, d.leases.big = d.cps, d.writes, d.big
	style := checkpointer.VersionInt
	if opt.StringVersions {
		style = checkpointer.VersionString
	}
	if err := opt.Retention.Validate(); err != nil {
		return nil, fmt.Errorf("mongodb: %w", err)
	}
	// The engine starts no sweeper: this Saver's own runs Sweep below,
	// which also drops what LangGraph's deletes leave behind.
	e, err := engine.New(d, engine.Options{Serde: opt.Serde, VersionStyle: style, SweepBatch: opt.SweepBatch})
	if err != nil {
		return nil, err
	}
	s := &Saver{Saver: e, d: d}
	s.sweeper = checkpointer.StartSweeper(opt.Retention, opt.SweepInterval, s.Sweep, opt.OnSweep)
	return s, nil
}

// Index names: Python's create_index default names for its key lists, so
// that Python finds them in place and creates nothing.
const (
	checkpointsIndex = "thread_id_1_checkpoint_ns_1_checkpoint_id_-1"
	writesIndex      = "thread_id_1_checkpoint_ns_1_checkpoint_id_-1_task_id_1_idx_1"
)

// Setup creates the unique compound indexes Python's MongoDBSaver creates,
// under the same names, and removes the threads an import (or another
// Update creating threads) was writing when its process died, once their
// leases expired (lease.go); it is idempotent.
func (s *Saver) Setup(ctx context.Context) error {
	if err := s.d.setup(ctx); err != nil {
		return err
	}
	return s.d.leases.recoverAll(ctx)
}

func (d *driver) setup(ctx context.Context) error {
	for _, ix := range []struct {
		coll *mongo.Collection
		name string
		keys bson.D
	}{
		{d.cps, checkpointsIndex, bson.D{{Key: fThread, Value: 1}, {Key: fNS, Value: 1}, {Key: fID, Value: -1}}},
		{d.writes, writesIndex, bson.D{{Key: fThread, Value: 1}, {Key: fNS, Value: 1}, {Key: fID, Value: -1}, {Key: fTask, Value: 1}, {Key: fIdx, Value: 1}}},
		{d.big, bigIndex, bson.D{{Key: fThread, Value: 1}, {Key: fNS, Value: 1}, {Key: "key", Value: 1}, {Key: "gen", Value: 1}, {Key: "seq", Value: 1}}},
	} {
		// An index on the same keys under another name is JS's
		// MongoDBSaver's (thread_ns_checkpoint_idx, not unique): the
		// server refuses a second one (IndexOptionsConflict), and it
		// serves the same queries, so it is kept. Python's find ours.
		has, err := mongoindex.HasIndexOn(ctx, ix.coll, ix.keys)
		if err != nil {
			return fmt.Errorf("mongodb: setup: %s indexes: %w", ix.coll.Name(), err)
		}
		if has {
			continue
		}
		_, err = ix.coll.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: ix.keys, Options: options.Index().SetUnique(true).SetName(ix.name)})
		if err != nil {
			return fmt.Errorf("mongodb: setup: %s index: %w", ix.coll.Name(), err)
		}
	}
	// The unique index of chunks before generations admits one
	// generation of a key: it goes (the new one serves its queries).
	names, err := d.big.Indexes().ListSpecifications(ctx)
	if err != nil {
		return fmt.Errorf("mongodb: setup: %s indexes: %w", bigCol, err)
	}
	for _, ix := range names {
		if ix.Name == oldBigIndex {
			if err := d.big.Indexes().DropOne(ctx, oldBigIndex); err != nil {
				return fmt.Errorf("mongodb: setup: %s index: %w", bigCol, err)
			}
		}
	}
	return nil
}

// Sweep is engine.Saver.Sweep, then, unless opt.DryRun, drops the large-
// value chunks of threads that hold no checkpoint, written over an hour
// before opt.Now: LangGraph's deleteThread leaves them behind, and no
// removal finds them (dropOrphanBig).
func (s *Saver) Sweep(ctx context.Context, policy checkpointer.RetentionPolicy, opt checkpointer.SweepOptions) (checkpointer.SweepReport, error) {
	rep, err := s.Saver.Sweep(ctx, policy, opt)
	if err != nil || opt.DryRun {
		return rep, err
	}
	now := opt.Now
	if now.IsZero() {
		now = time.Now()
	}
	if _, err := s.d.dropOrphanBig(ctx, now); err != nil {
		return rep, fmt.Errorf("mongodb: sweep: %w", err)
	}
	return rep, nil
}

// SampleConfig returns the thread and namespace of a checkpoint document
// of the first thread after the thread after (in thread id order; "" for
// the first of all), or nil when there is none: one index seek, no scan.
// vault's key check at Open reads a value there (GetTuple of it), and asks
// for the next when that value belongs to an erased data subject. (Listing
// threads, which that check used, reads every checkpoint document's ids.)
func (s *Saver) SampleConfig(ctx context.Context, after string) (*checkpointer.Config, error) {
	var doc struct {
		Thread string `bson:"thread_id"`
		NS     string `bson:"checkpoint_ns"`
	}
	filter := bson.D{}
	if after != "" {
		filter = bson.D{{Key: fThread, Value: bson.D{{Key: "$gt", Value: after}}}}
	}
	err := s.d.cps.FindOne(ctx, filter, options.FindOne().SetSort(bson.D{{Key: fThread, Value: 1}}).
		SetProjection(bson.D{{Key: fThread, Value: 1}, {Key: fNS, Value: 1}})).Decode(&doc)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("mongosaver: sample: %w", err)
	}
	return &checkpointer.Config{ThreadID: doc.Thread, CheckpointNS: doc.NS}, nil
}

// Close stops the retention sweeper, if any, and lets go of the thread
// leases this Saver kept between writes (sticky.go), so that other
// processes need not wait for them to expire. It does not disconnect the
// client.
func (s *Saver) Close() error {
	s.sweeper.Stop()
	err := s.Saver.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if lerr := s.d.leases.close(ctx); lerr != nil {
		return errors.Join(err, fmt.Errorf("mongodb: close: %w", lerr))
	}
	return err
}

// DrainWrites returns once every put, pending write and Update of any
// process that held a thread's lease when it began has ended (or lost its
// lease): an erasure calls it after destroying a subject's keys, so that
// the threads it then lists and deletes include every write that found
// those keys live (writes check them holding their thread's lease, in
// whichever process they run). It also waits for this process's writes
// (the driver's lock), which is all it can do with Options.NoLeases.
func (s *Saver) DrainWrites(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	// With the lock, no write of this process runs: the leases it kept
	// (sticky.go) go at once.
	s.d.mu.Lock()
	err := s.d.leases.releaseKept(ctx)
	s.d.mu.Unlock()
	if err != nil {
		return fmt.Errorf("mongodb: drain writes: %w", err)
	}
	if err := s.d.leases.drain(ctx); err != nil {
		return fmt.Errorf("mongodb: drain writes: %w", err)
	}
	return nil
}
