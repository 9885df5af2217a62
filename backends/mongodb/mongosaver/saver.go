package mongosaver

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/checkpointer/engine"
	"github.com/memvault/memvault/serde"
)

// ErrDocument is wrapped by the errors of documents the saver cannot read
// or write (a checkpoint type it does not read, malformed metadata).
var ErrDocument = errors.New("mongodb: unusable document")

// Options configures a Saver. The zero value is ready to use.
type Options struct {
	// Serde encodes channel values and pending writes (engine.Options).
	Serde serde.Serializer
	// StringVersions makes NextVersion write Python PostgresSaver's
	// string versions. Default: integers, as Python's and JS's
	// MongoDBSaver write them.
	StringVersions bool
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
	d *driver
}

// New returns a Saver on db's "checkpoints" and "checkpoint_writes"
// collections (Python's defaults; its default database is
// "checkpointing_db"). Call Setup once to create the indexes.
func New(db *mongo.Database, opt Options) (*Saver, error) {
	d := newDriver(db)
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

// Index names: Python's create_index default names for its key lists, so
// that Python finds them in place and creates nothing.
const (
	checkpointsIndex = "thread_id_1_checkpoint_ns_1_checkpoint_id_-1"
	writesIndex      = "thread_id_1_checkpoint_ns_1_checkpoint_id_-1_task_id_1_idx_1"
)

// Setup creates the unique compound indexes Python's MongoDBSaver creates,
// under the same names; it is idempotent.
func (s *Saver) Setup(ctx context.Context) error {
	return s.d.setup(ctx)
}

func (d *driver) setup(ctx context.Context) error {
	_, err := d.cps.Indexes().CreateOne(ctx, mongo.IndexModel{
		Keys:    bson.D{{Key: fThread, Value: 1}, {Key: fNS, Value: 1}, {Key: fID, Value: -1}},
		Options: options.Index().SetUnique(true).SetName(checkpointsIndex),
	})
	if err != nil {
		return fmt.Errorf("mongodb: setup: %s index: %w", checkpts, err)
	}
	_, err = d.writes.Indexes().CreateOne(ctx, mongo.IndexModel{
		Keys: bson.D{{Key: fThread, Value: 1}, {Key: fNS, Value: 1}, {Key: fID, Value: -1},
			{Key: fTask, Value: 1}, {Key: fIdx, Value: 1}},
		Options: options.Index().SetUnique(true).SetName(writesIndex),
	})
	if err != nil {
		return fmt.Errorf("mongodb: setup: %s index: %w", writesCol, err)
	}
	return nil
}
