package sqlitesaver

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/checkpointer/engine"
	"github.com/memvault/memvault/checkpointer/internal/core"
	"github.com/memvault/memvault/internal/sqlexec"
	"github.com/memvault/memvault/internal/sqlitedb"
	"github.com/memvault/memvault/reencrypt"
	"github.com/memvault/memvault/serde"
)

// Options configures a Saver. The zero value is ready to use.
type Options struct {
	// Serde encodes channel values and pending writes. Default:
	// serde.JSONPlus{}. A serde.BoundSerializer (such as an encrypting one)
	// is given the associated data of each value's location, exactly
	// as the PostgreSQL saver does, so rows keep decrypting when moved
	// between the two with their ids.
	Serde serde.Serializer
	// VersionStyle selects how NextVersion spells versions. Default:
	// checkpointer.VersionString (Python LangGraph's style). Open and New
	// refuse a value that is not a VersionStyle constant
	// (checkpointer.ErrInvalidVersionStyle).
	VersionStyle checkpointer.VersionStyle
	// FullSync makes a database opened by Open sync its write-ahead log on
	// every commit, so that a committed checkpoint survives power loss and
	// operating-system crashes, not only the crash of the process (see the
	// package documentation). The first Open of a file decides; New
	// ignores it.
	FullSync bool
	// NoMmap makes a database opened by Open read the file without
	// SQLite's memory map (internal/sqlitedb's NoMmap), as
	// store/sqlitestore does: set it when a store shares the file (vault
	// does), since the first Open of a file decides for both and a
	// store's search touches pages all over a large file. The first Open
	// of a file decides; New ignores it. Default: a 64 MiB map.
	NoMmap bool
	// Retention, when not empty, is applied by a background goroutine
	// every SweepInterval until Close (see Sweep); Open and New refuse a
	// policy with negative fields (checkpointer.ErrInvalidPolicy).
	// Default: keep everything, no goroutine.
	Retention checkpointer.RetentionPolicy
	// SweepInterval is how often the Retention policy runs: 0 means an
	// hour (checkpointer.DefaultSweepInterval), a negative value never (call Sweep
	// yourself, e.g. from `memvault threads sweep`).
	SweepInterval time.Duration
	// OnSweep, when set, receives the report or error of every background
	// sweep; the library logs nothing by itself.
	OnSweep func(checkpointer.SweepReport, error)
	// GroupCommit, 2 or more, commits concurrent callers' Put and
	// PutWrites calls — any threads — together: a write arriving while
	// another commits waits, and up to GroupCommit of those waiting are
	// then stored in one write transaction, one commit, each under a
	// savepoint of its own (one that fails, its parent gone say, stores
	// nothing and fails alone). A write with no commit in flight commits
	// alone at once. Every write still returns only once it is committed.
	// 0 or 1: each write is its own transaction.
	GroupCommit int
}

// Saver is a checkpointer.Saver on a SQLite database. It is safe for
// concurrent use, also by several processes on one file. Create it with
// Open or New.
//
// Every method but Reencrypt and DrainWrites is checkpointer/engine's,
// running on this package's driver: each write is one write transaction.
type Saver struct {
	*engine.Saver
	d     *driver
	serde serde.Serializer
}

// Saver implements every saver interface.
var _ core.Complete = (*Saver)(nil)

// SweepBatch is the number of threads per sweep transaction when
// SweepOptions.BatchThreads is 0: smaller than the PostgreSQL saver's
// default, since a SQLite write transaction holds the only write lock.
const SweepBatch = 10

// Open opens (creating it if needed) the database file at path, sets up
// its tables and returns a saver on it. A store/sqlitestore store opened on the
// same file shares the saver's connections. path ":memory:" gives a private
// in-memory database (for tests). Close the saver when done.
func Open(ctx context.Context, path string, opts Options) (*Saver, error) {
	o := sqlitedb.Options{NoMmap: opts.NoMmap}
	if opts.FullSync {
		o.Synchronous = sqlitedb.SyncFull
	}
	db, err := sqlitedb.Open(path, o)
	if err != nil {
		return nil, fmt.Errorf("sqlite: %w", err)
	}
	s, err := newSaver(ctx, db, opts)
	if err != nil {
		db.Close()
		return nil, err
	}
	return s, nil
}

// New returns a saver on db, a database opened with the "sqlite" driver of
// modernc.org/sqlite, after setting up its tables. The caller keeps owning
// db (Close does not close it) and chooses its pragmas; open it with
// "?_pragma=journal_mode(WAL)&_pragma=busy_timeout(5000)" for concurrent
// readers and writers. Savers and stores given the same db share one
// writer lock.
func New(ctx context.Context, db *sql.DB, opts Options) (*Saver, error) {
	h := sqlitedb.Wrap(db)
	s, err := newSaver(ctx, h, opts)
	if err != nil {
		h.Close()
		return nil, err
	}
	return s, nil
}

func newSaver(ctx context.Context, db *sqlitedb.DB, opts Options) (*Saver, error) {
	// The options are checked before the database is touched.
	if err := core.CheckOptions("sqlite", opts.VersionStyle, opts.Retention); err != nil {
		return nil, err
	}
	if err := db.Migrate(ctx, component, migrations); err != nil {
		return nil, fmt.Errorf("sqlite: setup: %w", err)
	}
	st, err := prepare(ctx, db)
	if err != nil {
		return nil, fmt.Errorf("sqlite: setup: %w", err)
	}
	d := &driver{db: db, st: st}
	e, err := engine.New(d, engine.Options{Serde: opts.Serde, VersionStyle: opts.VersionStyle, Retention: opts.Retention,
		SweepInterval: opts.SweepInterval, OnSweep: opts.OnSweep, SweepBatch: SweepBatch, GroupCommit: opts.GroupCommit})
	if err != nil {
		st.close()
		return nil, err
	}
	return &Saver{Saver: e, d: d, serde: e.Serde()}, nil
}

// Close releases the saver's database handle. A database from Open is
// closed when no saver or store uses it any more.
func (s *Saver) Close() error {
	s.Saver.Close() // before the handle goes: a running sweep batch rolls back
	s.d.st.close()
	if err := s.d.db.Close(); err != nil {
		return fmt.Errorf("sqlite: %w", err)
	}
	return nil
}

// DrainWrites returns once every write transaction on the file that began
// before it (in any process) has finished: it takes the write lock once.
// An erasure calls it after destroying a subject's keys, so that the rows
// it then lists and deletes include every write that found those keys live
// (writes check them holding the lock).
func (s *Saver) DrainWrites(ctx context.Context) error {
	if err := s.d.db.Write(ctx, func(*sql.Tx) error { return nil }); err != nil {
		return fmt.Errorf("sqlite: drain writes: %w", err)
	}
	return nil
}

// Reencrypt implements checkpointer.Reencrypter: every channel value and
// pending write not sealed under the serializer's primary key is sealed
// again, bound to the same row, in batches of one write transaction each.
// A row changed by someone else between read and write is left as it is
// (it was just written, so under the primary key). Running it again after
// an interruption continues where it stopped.
//
// Unless opt.DeferCompaction, a run that is not a dry run ends by
// compacting the database file (VACUUM, then emptying the write-ahead
// log): SQLite leaves images of rewritten rows in its pages, which the old
// key still opens. If a reader of another process keeps the log from
// being emptied, the error wraps reencrypt.ErrCompactPending: run
// Reencrypt again once it is done.
func (s *Saver) Reencrypt(ctx context.Context, opt reencrypt.Options) (reencrypt.Stats, error) {
	db := sqlexec.SQLite{Read: s.d.db.Reader(), Write: s.d.db.Write, CompactFile: s.d.db.Compact}
	return core.ReencryptSQL(ctx, "sqlite", db, s.serde, opt, "checkpoint_blobs", "checkpoint_writes")
}
