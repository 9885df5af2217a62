package mongostore

import (
	"cmp"
	"context"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/memvault/memvault/backends/mongodb/internal/mongoindex"
	"github.com/memvault/memvault/serde"
	"github.com/memvault/memvault/store"
	"github.com/memvault/memvault/store/engine"
)

// DefaultCollection is the items collection of Python's MongoDBStore
// (its default database is "checkpointing_db").
const DefaultCollection = "persistent-store"

// Options configures a Store. The zero value is a store on
// "persistent-store" without semantic search or TTLs, with values Python's
// MongoDBStore reads, on the system clock.
type Options struct {
	// Collection names the items collection; empty means
	// DefaultCollection.
	Collection string
	// VectorsCollection names the collection of vectors; empty means
	// Collection + ".vectors".
	VectorsCollection string
	// Index enables semantic search; nil disables it (queries are then
	// ignored and searches list items newest first).
	Index *store.IndexConfig
	// TTL enables expiry; nil means puts may not carry a TTL
	// (store.ErrNoTTL) and no sweeper runs.
	TTL *store.TTLConfig
	// Serde, when set, encodes item values: an envelope {"t": type tag,
	// "d": payload}, bound to the item's namespace and key by a
	// serde.BoundSerializer such as an encrypting one, stored as bytes in
	// memvault_value; the document then has no "value" and Python cannot
	// read it. nil stores each value as the BSON document Python reads.
	Serde serde.Serializer
	// Now is the clock of every timestamp and expiry; nil means time.Now.
	Now func() time.Time
	// VectorIndexBytes bounds the in-process code index (a sign code per
	// vector, d/8 + 16 bytes): searches rank items by it, then read and
	// score exactly only the best few vectors. 0 means
	// vecindex.DefaultBytes; negative disables it (every search reads
	// every vector under its prefix).
	VectorIndexBytes int64
	// LeaseTTL is how long the writer lease (see the package doc) of a
	// process that died blocks the other writers; 0 means
	// DefaultLeaseTTL. A write transaction renews it every third of it.
	LeaseTTL time.Duration
	// TTLIndex, with TTL, also asks the server to delete expired items
	// by itself, with a TTL index on a date copy of their expiry
	// (memvault_expires_at), where the server accepts one (MongoDB,
	// Atlas); New probes, and a server that refuses it (FerretDB v1)
	// leaves the store without it, saying why in Store.TTLIndex and a
	// warning on slog's default logger. Either way memvault's sweeper
	// keeps running and reads hide expired items. The server deletes
	// one document at a time, on its own clock (not Options.Now), about
	// once a minute: see the package doc's TTL section.
	TTLIndex bool
}

// Store is a store.Store on a MongoDB database (see the package doc),
// safe for concurrent use. Close stops its TTL sweeper; it does not
// disconnect the client.
type Store struct {
	*engine.Engine
	d *driver
}

// itemsIndex is the name of the unique index on (namespace_str, key):
// the default name of Python's create_index for those keys, so that
// Python finds it in place.
const itemsIndex = "namespace_str_1_key_1"

// vectorsIndex is the name of the vectors' index on (namespace_str, key).
const vectorsIndex = "memvault_vectors_item"

// New returns a store on db, after creating its indexes (idempotent):
// Python's unique (namespace_str, key) index on the items, one on
// (namespace_str, key) on the vectors.
func New(ctx context.Context, db *mongo.Database, opts Options) (*Store, error) {
	coll := cmp.Or(opts.Collection, DefaultCollection)
	d := &driver{items: db.Collection(coll), vecs: db.Collection(cmp.Or(opts.VectorsCollection, coll+".vectors")),
		index: db.Collection(coll + ".index"), log: db.Collection(coll + ".index_log"), snaps: db.Collection(coll + ".index_snapshot"),
		sealed: opts.Serde != nil, ttl: opts.TTL != nil, codes: opts.Index != nil,
		lease: writerLease{coll: db.Collection(coll + ".lease"), ttl: max(cmp.Or(opts.LeaseTTL, DefaultLeaseTTL), time.Second)}}
	if opts.Index != nil {
		d.dims = opts.Index.Dims
	}
	if err := d.setup(ctx); err != nil {
		return nil, fmt.Errorf("mongodb: setup: %w", err)
	}
	if opts.TTLIndex && opts.TTL != nil {
		if err := d.setupTTLIndex(ctx); err != nil {
			return nil, fmt.Errorf("mongodb: setup: %w", err)
		}
	}
	floats := int64(0)
	if opts.VectorIndexBytes >= 0 {
		floats = floatBudget
	}
	e, err := engine.New(d, engine.Options{Index: opts.Index, TTL: opts.TTL, Serde: opts.Serde, Now: opts.Now,
		VectorIndexBytes: opts.VectorIndexBytes, FloatBytes: floats})
	if err != nil {
		return nil, err
	}
	s := &Store{Engine: e, d: d}
	if err := engine.SyncCodes(ctx, e); err != nil {
		_ = s.Close()
		return nil, err
	}
	return s, nil
}

func (d *driver) setup(ctx context.Context) error {
	keys := bson.D{{Key: fNSStr, Value: 1}, {Key: fKey, Value: 1}}
	has, err := mongoindex.HasIndexOn(ctx, d.items, keys)
	if err != nil {
		return fmt.Errorf("%s indexes: %w", d.items.Name(), err)
	}
	if !has {
		if _, err := d.items.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: keys,
			Options: options.Index().SetUnique(true).SetName(itemsIndex)}); err != nil {
			return fmt.Errorf("%s index: %w", d.items.Name(), err)
		}
	}
	if has, err = mongoindex.HasIndexOn(ctx, d.vecs, keys); err != nil {
		return fmt.Errorf("%s indexes: %w", d.vecs.Name(), err)
	}
	if !has {
		if _, err := d.vecs.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: keys,
			Options: options.Index().SetName(vectorsIndex)}); err != nil {
			return fmt.Errorf("%s index: %w", d.vecs.Name(), err)
		}
	}
	return nil
}

// DrainWrites returns once every write transaction of any process that
// began before it has finished: it takes this process's write lock and
// the store's writer lease once. An erasure calls it after destroying a
// subject's keys, so that the items it then deletes include every put
// that found those keys live (puts check them holding the lease, in
// whichever process they run).
func (s *Store) DrainWrites(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.d.mu.Lock()
	defer s.d.mu.Unlock()
	h, err := s.d.lease.acquire(ctx)
	if err != nil {
		return err
	}
	h.release()
	return nil
}
