package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/memvault/memvault/checkpointer/internal/core"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

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
type DB interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
	SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults
	Begin(ctx context.Context) (pgx.Tx, error)
}

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
	// hour (core.DefaultSweepEvery), a negative value never (call Sweep
	// yourself).
	SweepInterval time.Duration
	// OnSweep, when set, receives the report or error of every background
	// sweep; the library logs nothing by itself.
	OnSweep func(checkpointer.SweepReport, error)
}

// Saver is LangGraph's PostgresSaver on pgx: the same tables, rows and SQL
// semantics, so Python and JS LangGraph services can share the database. It
// implements every saver interface (core.Complete lists them), and is safe
// for concurrent use (it holds no lock of its own; PostgreSQL orders
// concurrent writers).
//
// DeleteThread, Prune, CopyThread, DeleteForRuns and DeleteCheckpoint are
// the checkpointer core's (argument checks, trivial cases) around this
// saver's statements.
type Saver struct {
	*front
	db     DB
	serde  serde.Serializer
	codec  binding.Codec // serde, binding values to their location
	reader core.Reader   // builds tuples from rows, opening values where they live
	style  checkpointer.VersionStyle
	inTx   bool // db is a transaction: no CONCURRENTLY, no session locks
	q      queries
	// sweeper runs the Retention policy; nil without one.
	sweeper *core.Background
}

var _ core.Complete = (*Saver)(nil)

// front is the checkpointer core's side of the management methods.
type front = core.Front

// bindFront gives s its Front, bound to s's own database.
func (s *Saver) bindFront() {
	s.front = core.NewFront("postgres", core.Hooks{
		DeleteThread:     s.deleteThread,
		Prune:            s.prune,
		CopyThread:       s.copyThread,
		DeleteForRuns:    s.deleteForRuns,
		DeleteCheckpoint: s.deleteCheckpoint,
	})
}

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
	s := &Saver{db: db, serde: opts.Serde, style: opts.VersionStyle}
	if s.serde == nil {
		s.serde = serde.JSONPlus{}
	}
	s.codec = binding.New(s.serde)
	s.reader = core.Reader{Codec: s.codec, Style: s.style}
	_, s.inTx = db.(pgx.Tx)
	s.q = buildQueries(opts.Schema)
	s.bindFront()
	if !s.inTx {
		s.sweeper = core.StartSweeper(opts.Retention, opts.SweepInterval, s.Sweep, opts.OnSweep)
	}
	return s, nil
}

// Close stops the background sweeper, if any, and waits for it to return
// (a batch it was running rolls back). It does not close the DB, which
// the caller owns; without a Retention policy it does nothing.
func (s *Saver) Close() error {
	s.sweeper.Stop()
	return nil
}

// NextVersion implements checkpointer.Saver in the configured VersionStyle.
func (s *Saver) NextVersion(current string) string {
	return core.NextVersionStyle(s.style, current)
}

// ident quotes a table name, qualified by schema when one is set.
func ident(schema, table string) string {
	if schema == "" {
		return table
	}
	return pgx.Identifier{schema, table}.Sanitize()
}
