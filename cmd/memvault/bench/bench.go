package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"
)

// Defaults that a zero option stands for; they are the memvault bench
// flags' defaults too.
const (
	// DefaultDuration is how long each row runs.
	DefaultDuration = 2 * time.Second
	// DefaultConcurrency is the number of operations in flight in the
	// concurrent rows.
	DefaultConcurrency = 16
	// DefaultItems is how many items the store bench searches over.
	DefaultItems = 10000
	// DefaultDims is the store bench's embedding dimensions.
	DefaultDims = 64
	// DefaultThreads is how many threads the scale workload spreads its
	// checkpoints over.
	DefaultThreads = 10000
	// DefaultScaleBase is how many checkpoints the scale workload's small
	// data set holds.
	DefaultScaleBase = 10000
)

// MaxDims bounds StoreOptions.Dims: pgvector indexes at most 4000
// dimensions (as halfvec), and the bench precomputes a vector for each of
// the items its put rows write.
const MaxDims = 4000

// ErrOptions is wrapped by the error a Run function returns for options it
// refuses; nothing has run then. The message names the option by the
// memvault bench flag that sets it (--ops, --dims, ...), since the CLI
// prints it as is.
var ErrOptions = errors.New("bench: options refused")

// optionError is a refused option: its message is the CLI's, and it
// matches ErrOptions.
type optionError struct{ msg string }

func (e *optionError) Error() string        { return e.msg }
func (e *optionError) Is(target error) bool { return target == ErrOptions }

func optionf(format string, args ...any) error {
	return &optionError{fmt.Sprintf(format, args...)}
}

// Options are the settings both benches share. The zero value runs every
// operation on PostgreSQL for DefaultDuration per row, one at a time and
// DefaultConcurrency in flight, and prints a table; DSN must be set for
// PostgreSQL.
type Options struct {
	// DSN is the PostgreSQL connection string (MongoDB's or Redis's URL
	// with those backends). The bench creates a schema (database, key
	// prefix) of its own there and drops it afterwards. Unused with Backend
	// "sqlite".
	DSN string
	// Backend is "postgres" (or "") or "sqlite": a temporary file, removed
	// afterwards, with raw SQL on the same file as the baseline: the
	// checkpointer bench's classic operations (with the audited column),
	// or the workloads of CheckpointerOptions.Workload and Scale. The
	// checkpointer bench also
	// takes BackendMongoDB and BackendRedis (DSN the server's URL): the
	// classic operations and the growing-messages workload, next to the
	// same operations through the Go driver or go-redis.
	Backend string
	// Duration is how long each row runs, in slices of about a second
	// that alternate between the modes (see the README). Zero means
	// DefaultDuration.
	Duration time.Duration
	// Concurrency is the number of operations in flight in the concurrent
	// rows; every operation also runs one at a time. Zero means
	// DefaultConcurrency.
	Concurrency int
	// Ops names the operations to run; empty runs them all. An unknown
	// name is refused.
	Ops []string
	// JSON prints JSON lines for scripts: on PostgreSQL first one
	// {"cluster":{...}} object with the cluster's durability settings,
	// then one Row per line. False prints a table, then ratios.
	JSON bool
	// JSDir, when set, adds a column for JS LangGraph's PostgresSaver or
	// PostgresStore run by node from this directory, which holds bench.mjs
	// and its node_modules (interop/js). PostgreSQL only; empty: no JS
	// column.
	JSDir string
}

// CheckpointerOptions set the checkpointer bench. The zero value (with a
// DSN) runs the classic bench: put, put_writes, get_tuple,
// get_tuple_by_id and list10 on PostgreSQL next to raw pgx.
type CheckpointerOptions struct {
	Options
	// Workload "messages" runs the growing-messages workload instead of
	// the classic bench: a messages channel gaining one ~500-byte message
	// per step over 200 steps (put_messages, get_messages_50,
	// get_messages_200). Empty: not run.
	Workload string
	// Scale, when positive, seeds that many checkpoints over Threads
	// threads and measures get_tuple, get_tuple_by_id, list10 and put next
	// to ScaleBase checkpoints of the same thread shape, instead of the
	// classic bench. Zero: not run.
	Scale int
	// Threads is the number of threads Scale spreads its checkpoints over.
	// Zero means DefaultThreads.
	Threads int
	// ScaleBase is the number of checkpoints of the small data set
	// measured beside Scale's. Zero means DefaultScaleBase.
	ScaleBase int
}

// StoreOptions set the store bench: put (with embedding), get and
// search_k10 over Items items, next to raw SQL. The zero value (with a
// DSN) runs it on PostgreSQL + pgvector over DefaultItems items of
// DefaultDims dimensions.
type StoreOptions struct {
	Options
	// Items is the number of items seeded and searched over. Zero means
	// DefaultItems.
	Items int
	// Dims is the embedding dimensions of the offline hashing embedder, 1
	// to MaxDims. Zero means DefaultDims.
	Dims int
	// Topics, when not zero (SQLite only), runs the clustered mode
	// instead: search k=10 latency, first search after open, recall@10
	// and memory over Items generated vectors in Topics dense topics,
	// beside the same count spread over Items/100 topics.
	Topics int
}

// withDefaults replaces the zero values by the defaults they stand for.
func (o Options) withDefaults() Options {
	if o.Duration == 0 {
		o.Duration = DefaultDuration
	}
	if o.Concurrency == 0 {
		o.Concurrency = DefaultConcurrency
	}
	return o
}

func (o CheckpointerOptions) withDefaults() CheckpointerOptions {
	o.Options = o.Options.withDefaults()
	if o.Threads == 0 {
		o.Threads = DefaultThreads
	}
	if o.ScaleBase == 0 {
		o.ScaleBase = DefaultScaleBase
	}
	return o
}

func (o StoreOptions) withDefaults() StoreOptions {
	o.Options = o.Options.withDefaults()
	if o.Items == 0 {
		o.Items = DefaultItems
	}
	if o.Dims == 0 {
		o.Dims = DefaultDims
	}
	return o
}

// params are the checks' and workloads' view of the options.
func (o Options) params() params {
	return params{duration: o.Duration, concurrency: o.Concurrency, ops: o.Ops, backend: o.Backend}
}

func (o CheckpointerOptions) shapes() shapeParams {
	return shapeParams{workload: o.Workload, scale: o.Scale, threads: o.Threads, scaleBase: o.ScaleBase, backend: o.Backend}
}

// Check returns the error RunCheckpointer would return for options it
// refuses (wrapping ErrOptions), without running anything, so that a
// caller can check the options before it looks for a DSN.
func (o CheckpointerOptions) Check() error {
	o = o.withDefaults()
	if err := o.Options.check(); err != nil {
		return err
	}
	if nosqlBackend(o.Backend) {
		return o.checkNoSQL()
	}
	bf, sf := o.params(), o.shapes()
	if !sf.active() {
		if o.Backend == "sqlite" && o.JSDir != "" {
			return optionf("--js measures JS LangGraph's PostgresSaver: not with --backend sqlite")
		}
		return bf.checkOps("put", "put_writes", "get_tuple", "get_tuple_by_id", "list10")
	}
	if err := sf.check(); err != nil {
		return err
	}
	if err := bf.checkOps("put_messages", "get_messages_50", "get_messages_200", "get_tuple", "get_tuple_by_id", "list10", "put"); err != nil {
		return err
	}
	if sf.backend == "sqlite" && o.JSDir != "" {
		return optionf("--js measures JS LangGraph's PostgresSaver: not with --backend sqlite")
	}
	return nil
}

// Check returns the error RunStore would return for options it refuses
// (wrapping ErrOptions), without running anything.
func (o StoreOptions) Check() error {
	o = o.withDefaults()
	bf := o.params()
	if err := bf.checkOps("put", "get", "search_k10"); err != nil {
		return err
	}
	if o.Dims <= 0 || o.Dims > MaxDims {
		return optionf("--dims %d: want 1..%d", o.Dims, MaxDims)
	}
	if o.Items <= 0 {
		return optionf("--items %d: want at least 1", o.Items)
	}
	if o.Topics < 0 || (o.Topics > 0 && o.Backend != "sqlite") {
		return optionf("--topics %d: want 0 (off), or at least 1 with --backend sqlite", o.Topics)
	}
	if err := o.Options.check(); err != nil {
		return err
	}
	switch o.Backend {
	case "", "postgres":
	case "sqlite":
		if o.JSDir != "" {
			return optionf("--js measures JS LangGraph's PostgresStore: not with --backend sqlite")
		}
	default:
		return optionf("--backend %q: want postgres or sqlite", o.Backend)
	}
	return nil
}

// check refuses a negative duration or concurrency (zero stands for the
// default).
func (o Options) check() error {
	if o.Concurrency <= 0 {
		return optionf("--concurrency %d: want at least 1", o.Concurrency)
	}
	if o.Duration <= 0 {
		return optionf("--duration %s: want more than 0", o.Duration)
	}
	return nil
}

// needDSN refuses to run on PostgreSQL without a connection string (which
// pgx would read as "the local server, by environment variables").
func (o Options) needDSN() error {
	if o.Backend != "sqlite" && o.DSN == "" {
		return optionf("bench needs PostgreSQL: no DSN")
	}
	return nil
}

// RunCheckpointer runs the checkpointer bench o selects and writes its
// report to w as it goes: the library's savers (plaintext and encrypted)
// next to a raw baseline, each operation at concurrency 1 and
// o.Concurrency, then (in the table) the ratios. It creates its tables in
// a schema of its own (or a temporary SQLite file) and removes them
// afterwards.
func RunCheckpointer(ctx context.Context, w io.Writer, o CheckpointerOptions) error {
	if err := o.Check(); err != nil {
		return err
	}
	o = o.withDefaults()
	if nosqlBackend(o.Backend) {
		if o.DSN == "" {
			return optionf("bench --backend %s needs its server: pass --dsn", o.Backend)
		}
		return benchNoSQL(ctx, w, o)
	}
	bf, sf := o.params(), o.shapes()
	if sf.active() {
		if sf.backend != "sqlite" {
			if err := o.needDSN(); err != nil {
				return err
			}
		}
		return benchShapes(ctx, w, o.DSN, o.JSON, bf, sf, o.JSDir)
	}
	if o.Backend == "sqlite" {
		return benchClassicSQLite(ctx, w, o.JSON, bf)
	}
	if err := o.needDSN(); err != nil {
		return err
	}
	return benchCheckpointer(ctx, w, o.DSN, o.JSON, bf, o.JSDir)
}

// RunStore runs the store bench and writes its report to w as it goes:
// put (with embedding), get and search_k10 for the library's stores
// (plaintext and encrypted; on PostgreSQL with an HNSW and a flat index)
// next to raw SQL, each at concurrency 1 and o.Concurrency, then (in the
// table) the ratios. It seeds its stores in schemas of their own (or
// temporary SQLite files) and removes them afterwards.
func RunStore(ctx context.Context, w io.Writer, o StoreOptions) error {
	if err := o.Check(); err != nil {
		return err
	}
	o = o.withDefaults()
	if err := o.needDSN(); err != nil {
		return err
	}
	bf := o.params()
	bf.items, bf.dims = o.Items, o.Dims
	if o.Backend == "sqlite" && o.Topics > 0 {
		return benchStoreSQLiteTopics(ctx, w, o.JSON, bf, o.Topics)
	}
	if o.Backend == "sqlite" {
		return benchStoreSQLite(ctx, w, o.JSON, bf)
	}
	return benchStorePG(ctx, w, o.DSN, o.JSON, bf, o.JSDir)
}

// params are the settings the workloads share.
type params struct {
	duration    time.Duration
	concurrency int
	items       int
	ops         []string // empty: every operation
	dims        int      // store: embedding dimensions
	backend     string   // "postgres" (or "") or "sqlite"
}
