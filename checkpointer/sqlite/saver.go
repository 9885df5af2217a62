package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/checkpointer/internal/core"
	"github.com/memvault/memvault/internal/binding"
	"github.com/memvault/memvault/internal/sqlexec"
	"github.com/memvault/memvault/internal/sqlitedb"
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
	// Retention, when not empty, is applied by a background goroutine
	// every SweepInterval until Close (see Sweep); Open and New refuse a
	// policy with negative fields (checkpointer.ErrInvalidPolicy).
	// Default: keep everything, no goroutine.
	Retention checkpointer.RetentionPolicy
	// SweepInterval is how often the Retention policy runs: 0 means an
	// hour (core.DefaultSweepEvery), a negative value never (call Sweep
	// yourself, e.g. from `memvault threads sweep`).
	SweepInterval time.Duration
	// OnSweep, when set, receives the report or error of every background
	// sweep; the library logs nothing by itself.
	OnSweep func(checkpointer.SweepReport, error)
}

// Saver is a checkpointer.Saver on a SQLite database. It is safe for
// concurrent use, also by several processes on one file. Create it with
// Open or New.
//
// DeleteThread, Prune, CopyThread, DeleteForRuns and DeleteCheckpoint are
// the checkpointer core's (argument checks, trivial cases) around this
// saver's statements, each run in one write transaction.
type Saver struct {
	*front
	db     *sqlitedb.DB
	st     *stmts
	serde  serde.Serializer
	codec  binding.Codec // serde, binding values to their location
	reader core.Reader   // builds tuples from rows, opening values where they live
	style  checkpointer.VersionStyle
	// sweeper runs the Retention policy; nil without one.
	sweeper *core.Background
}

// Saver implements every saver interface (core.Complete lists them).
var _ core.Complete = (*Saver)(nil)

// front is the checkpointer core's side of the management methods.
type front = core.Front

// Open opens (creating it if needed) the database file at path, sets up
// its tables and returns a saver on it. A store/sqlite store opened on the
// same file shares the saver's connections. path ":memory:" gives a private
// in-memory database (for tests). Close the saver when done.
func Open(ctx context.Context, path string, opts Options) (*Saver, error) {
	o := sqlitedb.Options{}
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
	sd := opts.Serde
	if sd == nil {
		sd = serde.JSONPlus{}
	}
	codec := binding.New(sd)
	s := &Saver{db: db, st: st, serde: sd, codec: codec, style: opts.VersionStyle,
		reader: core.Reader{Codec: codec, Style: opts.VersionStyle}}
	s.front = core.NewFront("sqlite", core.Hooks{
		DeleteThread:     s.deleteThread,
		Prune:            s.prune,
		CopyThread:       s.copyThread,
		DeleteForRuns:    s.deleteForRuns,
		DeleteCheckpoint: s.deleteCheckpoint,
	})
	s.sweeper = core.StartSweeper(opts.Retention, opts.SweepInterval, s.Sweep, opts.OnSweep)
	return s, nil
}

// Close releases the saver's database handle. A database from Open is
// closed when no saver or store uses it any more.
func (s *Saver) Close() error {
	s.sweeper.Stop() // before the handle goes: a running batch rolls back
	s.st.close()
	if err := s.db.Close(); err != nil {
		return fmt.Errorf("sqlite: %w", err)
	}
	return nil
}

// NextVersion implements checkpointer.Saver.
func (s *Saver) NextVersion(current string) string {
	return core.NextVersionStyle(s.style, current)
}

type blobRow struct {
	channel, version, typ string
	data                  []byte
}

// Put implements checkpointer.Saver. The values of the channels in
// newVersions are written as blob rows (type "empty" for a channel without
// a value) and the checkpoint row after them, in one transaction: a Put
// that returned is durable, one that did not left nothing behind. A put
// that inherits values from its parent (cfg.CheckpointID) fails with
// checkpointer.ErrParentMissing when the parent is no longer stored.
func (s *Saver) Put(ctx context.Context, cfg checkpointer.Config, cp *checkpointer.Checkpoint, md checkpointer.Metadata, newVersions map[string]string) (checkpointer.Config, error) {
	// Serialize (and encrypt) before taking the write lock.
	r, err := core.Put(ctx, s.codec, s.style, cfg, cp, md, newVersions)
	if err != nil {
		return checkpointer.Config{}, fmt.Errorf("sqlite: %w", err)
	}
	var parent any
	if r.Parent != "" {
		parent = r.Parent
	}
	err = s.db.Write(ctx, func(tx *sql.Tx) error {
		// Holding the write lock: an erasure's DrainWrites waits for it.
		if err := s.codec.Check(ctx, &r.Fence); err != nil {
			return err
		}
		if len(r.Blobs) > 0 {
			st := tx.StmtContext(ctx, s.st.putBlob)
			for _, b := range r.Blobs {
				if _, err := st.ExecContext(ctx, r.Thread, r.NS, b.Channel, b.Version, b.Type, b.Data); err != nil {
					return err
				}
			}
		}
		if !r.NeedsParent {
			_, err := tx.StmtContext(ctx, s.st.putCheckpoint).ExecContext(ctx, r.Thread, r.NS, r.ID, parent, r.Doc, r.Meta)
			return err
		}
		// The parent this put inherits values from must still be there.
		// A sweep, prune or delete runs in a write transaction too, so
		// none can remove it between this insert and the commit; when it
		// is gone, the rollback drops the blob rows written above.
		res, err := tx.StmtContext(ctx, s.st.putChild).ExecContext(ctx, r.Thread, r.NS, r.ID, parent, r.Doc, r.Meta)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil {
			return err
		} else if n == 0 {
			return core.ParentMissing(r.Thread, r.NS, r.Parent)
		}
		return nil
	})
	if err != nil {
		return checkpointer.Config{}, fmt.Errorf("sqlite: put %s: %w", cp.ID, err)
	}
	return checkpointer.Config{ThreadID: r.Thread, CheckpointNS: r.NS, CheckpointID: r.ID}, nil
}

// PutWrites implements checkpointer.Saver.
func (s *Saver) PutWrites(ctx context.Context, cfg checkpointer.Config, writes []checkpointer.Write, taskID, taskPath string) error {
	w, err := core.PutWrites(ctx, s.codec, cfg, writes, taskID, taskPath)
	if err != nil {
		return fmt.Errorf("sqlite: %w", err)
	}
	if w == nil {
		return ctx.Err()
	}
	stmt := s.st.insertWrite
	if w.Upsert {
		stmt = s.st.upsertWrite
	}
	err = s.db.Write(ctx, func(tx *sql.Tx) error {
		if err := s.codec.Check(ctx, &w.Fence); err != nil {
			return err
		}
		st := tx.StmtContext(ctx, stmt)
		for _, r := range w.Rows {
			if _, err := st.ExecContext(ctx, w.Thread, w.NS, w.Checkpoint, w.Task, w.TaskPath, r.Idx, r.Channel, r.Type, r.Data); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("sqlite: put writes: %w", err)
	}
	return nil
}

// DrainWrites returns once every write transaction on the file that began
// before it (in any process) has finished: it takes the write lock once.
// An erasure calls it after destroying a subject's keys, so that the rows
// it then lists and deletes include every write that found those keys live
// (writes check them holding the lock: binding.Fence).
func (s *Saver) DrainWrites(ctx context.Context) error {
	if err := s.db.Write(ctx, func(*sql.Tx) error { return nil }); err != nil {
		return fmt.Errorf("sqlite: drain writes: %w", err)
	}
	return nil
}

// deleteThread is the core's DeleteThread hook (core.Hooks).
func (s *Saver) deleteThread(ctx context.Context, threadID string) error {
	err := s.db.Write(ctx, func(tx *sql.Tx) error { return deleteThreads(ctx, tx, threadID) })
	if err != nil {
		return fmt.Errorf("sqlite: delete thread: %w", err)
	}
	return nil
}

// deleteThreadSQL deletes the rows of table of the threads named by its
// one parameter, a JSON array of ids: a search of the primary key, which
// leads with thread_id, per id.
func deleteThreadSQL(table string) string {
	return `DELETE FROM ` + table + ` WHERE thread_id IN ` + inThreads
}

// deleteThreads deletes the threads, whatever their number, with three
// statements (one per table), the ids given as one JSON array.
func deleteThreads(ctx context.Context, tx *sql.Tx, threadIDs ...string) error {
	arg, err := json.Marshal(threadIDs)
	if err != nil {
		return err
	}
	for _, table := range []string{"checkpoint_writes", "checkpoint_blobs", "checkpoints"} {
		if _, err := tx.ExecContext(ctx, deleteThreadSQL(table), string(arg)); err != nil {
			return err
		}
	}
	return nil
}

// sqlDB lends the saver's database to the core's shared SQL operations.
func (s *Saver) sqlDB() sqlexec.DB {
	return sqlexec.SQLite{Read: s.db.Reader(), Write: s.db.Write, CompactFile: s.db.Compact}
}
