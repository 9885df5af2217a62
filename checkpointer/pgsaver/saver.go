package pgsaver

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/memvault/memvault/checkpointer/engine"
	"github.com/memvault/memvault/checkpointer/internal/core"
	"github.com/memvault/memvault/internal/pgcitus"
	"github.com/memvault/memvault/internal/pgdb"
	"github.com/memvault/memvault/internal/pgfence"
	"github.com/memvault/memvault/reencrypt"

	"github.com/jackc/pgx/v5"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/internal/binding"
	"github.com/memvault/memvault/serde"
)

// DB is what the saver runs its statements on. *pgxpool.Pool, *pgx.Conn and
// pgx.Tx all satisfy it.
//
// With a pool the saver is safe for concurrent use and List holds one pooled
// connection while it is being iterated. A single connection or a
// transaction runs one statement at a time: do not call the saver (or use the
// connection) from inside a List loop over it.
type DB = pgdb.DB

// Options configure a Saver. The zero value is usable.
type Options struct {
	// Schema holds the tables. "" (the default) leaves table names
	// unqualified, so they resolve through search_path exactly as Python
	// LangGraph's do; a name makes every statement use "<schema>".<table>,
	// as JS LangGraph's schema option does, and Setup creates the schema.
	Schema string
	// Serde encodes channel values and pending writes. Default:
	// serde.JSONPlus{} (plain, readable by Python and JS). An encrypting
	// serializer (serde.BoundSerializer) has every value bound to its row:
	// thread, namespace, channel and version for values; thread,
	// namespace, checkpoint, task, index and channel for writes.
	Serde serde.Serializer
	// VersionStyle is how NextVersion spells channel versions: Python's
	// strings (the default) or JS's integers. Set VersionInt when JS
	// LangGraph shares the database. New refuses any other value
	// (checkpointer.ErrInvalidVersionStyle).
	VersionStyle checkpointer.VersionStyle
	// Retention, when not empty, is applied by a background goroutine
	// every SweepInterval until Close (see Sweep); New refuses a policy
	// with negative fields (checkpointer.ErrInvalidPolicy). A saver on a
	// transaction (pgx.Tx) never starts one. Run it in one process per
	// database, or leave it to `memvault threads sweep`: concurrent sweeps
	// are correct but waste work. Default: keep everything, no goroutine.
	Retention checkpointer.RetentionPolicy
	// SweepInterval is how often the Retention policy runs: 0 means an
	// hour (checkpointer.DefaultSweepInterval), a negative value never (call Sweep
	// yourself).
	SweepInterval time.Duration
	// OnSweep, when set, receives the report or error of every background
	// sweep; the library logs nothing by itself.
	OnSweep func(checkpointer.SweepReport, error)
	// GroupCommit, 2 or more, commits concurrent callers' Put and
	// PutWrites calls — any threads — together: a write arriving while
	// another of this saver commits waits, and up to GroupCommit of those
	// waiting are then sent as one batch, one transaction, one round trip
	// and one commit; one that fails (its parent gone, an erased subject's
	// fence) fails alone and the others are stored. A write with no commit
	// in flight commits alone at once. Every write still returns only once
	// it is committed. Ignored on a transaction (pgx.Tx). 0 or 1: each
	// write is its own transaction, concurrent ones on their own
	// connections.
	//
	// PostgreSQL already shares one WAL flush among the commits of
	// concurrent connections, so a group saves the server's work, not
	// fsyncs: a group's puts are one statement, its pending writes one
	// more, and their audit records rows of those statements or one more
	// (ops under a subject's key, and every op on Citus, are one statement
	// each), where each write alone is a statement and a transaction. Measure before turning it on: it pays where the
	// server's CPU is what writers wait for.
	GroupCommit int
	// GroupCommitFlights is how many groups may commit at once, each on
	// a connection of its own (0 means DefaultGroupCommitFlights). Fewer
	// flights make larger groups, whose rows cost the server less each;
	// with one, every write of 16 in flight waited for one server process.
	GroupCommitFlights int
}

// DefaultGroupCommitFlights is Options.GroupCommitFlights' default: on
// the 2-core test machine, 16 puts in flight, groups as rows used 0.62×
// the CPU (client and server) of one transaction per put with 2 flights
// and 0.76× with 4 (medians of 3 rounds; one statement per op: 0.73× and
// 0.77×).
const DefaultGroupCommitFlights = 2

// Saver is LangGraph's PostgresSaver on pgx: the same tables, rows and SQL
// semantics, so Python and JS LangGraph services can share the database. It
// implements every saver interface and is safe for concurrent use (it
// holds no lock of its own; PostgreSQL orders concurrent writers).
//
// Every method but the …Tx twins, Setup, Reencrypt and DrainWrites is
// checkpointer/engine's, running on this package's driver.
type Saver struct {
	*engine.Saver
	db    DB
	serde serde.Serializer
	codec binding.Codec // for DrainWrites
	inTx  bool          // db is a transaction: no CONCURRENTLY, no session locks
	q     queries
	topo  *pgcitus.Topology // whether db is a Citus coordinator, asked once
}

// Saver implements every saver interface.
var _ core.Complete = (*Saver)(nil)

// New returns a Saver over db. It does not touch the database: call Setup
// once (at deploy or start-up) to create or upgrade the tables.
func New(db DB, opts Options) (*Saver, error) {
	if db == nil {
		return nil, errors.New("postgres: nil DB")
	}
	if strings.IndexByte(opts.Schema, 0) >= 0 {
		return nil, fmt.Errorf("%w: schema name", checkpointer.ErrInvalidID)
	}
	if err := core.CheckOptions("postgres", opts.VersionStyle, opts.Retention); err != nil {
		return nil, err
	}
	s := &Saver{db: db, q: buildQueries(opts.Schema), topo: &pgcitus.Topology{}}
	_, s.inTx = db.(pgx.Tx)
	eo := engine.Options{Serde: opts.Serde, VersionStyle: opts.VersionStyle}
	if !s.inTx {
		eo.Retention, eo.SweepInterval, eo.OnSweep = opts.Retention, opts.SweepInterval, opts.OnSweep
		eo.GroupCommit = opts.GroupCommit
		eo.GroupCommitFlights = opts.GroupCommitFlights
		if eo.GroupCommitFlights == 0 {
			eo.GroupCommitFlights = DefaultGroupCommitFlights
		}
	}
	e, err := engine.New(&driver{db: db, q: &s.q, own: !s.inTx, topo: s.topo}, eo)
	if err != nil {
		return nil, err
	}
	s.Saver, s.serde = e, e.Serde()
	s.codec = binding.New(s.serde)
	return s, nil
}

// on is the saver's engine on the caller's transaction tx.
func (s *Saver) on(tx pgx.Tx) *engine.Saver {
	return s.Saver.On(&driver{db: tx, q: &s.q, topo: s.topo})
}

// PutTx is Put inside the caller's transaction: the checkpoint commits or
// rolls back with the caller's own rows.
func (s *Saver) PutTx(ctx context.Context, tx pgx.Tx, cfg checkpointer.Config, cp *checkpointer.Checkpoint, md checkpointer.Metadata, newVersions map[string]string) (checkpointer.Config, error) {
	if tx == nil {
		return checkpointer.Config{}, fmt.Errorf("postgres: put: nil transaction")
	}
	return s.on(tx).Put(ctx, cfg, cp, md, newVersions)
}

// PutWritesTx is PutWrites inside the caller's transaction.
func (s *Saver) PutWritesTx(ctx context.Context, tx pgx.Tx, cfg checkpointer.Config, writes []checkpointer.Write, taskID, taskPath string) error {
	if tx == nil {
		return fmt.Errorf("postgres: put writes: nil transaction")
	}
	return s.on(tx).PutWrites(ctx, cfg, writes, taskID, taskPath)
}

// DeleteThreadTx is DeleteThread inside the caller's transaction.
func (s *Saver) DeleteThreadTx(ctx context.Context, tx pgx.Tx, threadID string) error {
	if tx == nil {
		return fmt.Errorf("postgres: delete thread: nil transaction")
	}
	return s.on(tx).DeleteThread(ctx, threadID)
}

// DeleteCheckpointTx is DeleteCheckpoint inside the caller's transaction.
func (s *Saver) DeleteCheckpointTx(ctx context.Context, tx pgx.Tx, cfg checkpointer.Config) error {
	if tx == nil {
		return fmt.Errorf("postgres: delete checkpoint: nil transaction")
	}
	return s.on(tx).DeleteCheckpoint(ctx, cfg)
}

// DrainWrites returns once every write that may have found a destroyed key
// live has committed or failed (pgfence.Drain): an erasure calls it after
// destroying a subject's keys, before it deletes the subject's threads.
func (s *Saver) DrainWrites(ctx context.Context) error {
	if err := pgfence.Drain(ctx, s.codec, s.db); err != nil {
		return fmt.Errorf("postgres: %w", err)
	}
	return nil
}

// Reencrypt implements checkpointer.Reencrypter: every channel value and
// pending write not sealed under the serializer's primary key is sealed
// again, bound to the same row. Rows are read in primary-key order, a batch
// at a time, and each batch is written back in one transaction (a savepoint
// of the caller's, when the saver runs in one) with compare-and-swap
// updates, so rows written meanwhile (already under the primary key) are
// left alone and an interrupted run can simply be started again. LangGraph
// "aes" rows from Python are rewritten in the format this saver writes.
func (s *Saver) Reencrypt(ctx context.Context, opt reencrypt.Options) (reencrypt.Stats, error) {
	return core.ReencryptSQL(ctx, "postgres", pgdb.Exec{DB: s.db}, s.serde, opt, s.q.blobs, s.q.writes)
}
