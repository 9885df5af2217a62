package main

import (
	"errors"
	"strings"

	"github.com/spf13/cobra"

	"github.com/memvault/memvault/cmd/memvault/bench"
	"github.com/memvault/memvault/vault"
)

func newBenchCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Measure the backends (PostgreSQL, or SQLite with --backend sqlite) next to a raw-SQL baseline",
		Long: `bench runs each operation sequentially and with 16 in flight, for the library
(plaintext and encrypted) and for a baseline that sends equivalent SQL directly
(pgx on PostgreSQL, database/sql on SQLite), and prints ops/s, p50 and p99. On
PostgreSQL (--dsn) it creates its own tables in a schema of its own and drops them
afterwards, and prints the cluster's durability settings first (fsync,
synchronous_commit, full_page_writes, ...): figures are comparable only between
runs on the same settings. --backend sqlite measures a temporary SQLite file
instead (store: every operation; checkpointer: the classic operations with the
audited column, --workload and --scale). --json
prints JSON lines: one {"cluster":{...}} object, then one object per row. checkpointer --js interop/js adds a column for JS
LangGraph's PostgresSaver run by node in the same alternating slices (its client
CPU is node's); store --js interop/js adds one for JS LangGraph's PostgresStore,
in a schema of its own with the same items, its embedding function looking up
vectors precomputed by memvault's hashing embedder (so its embedding cost is not
in its column).`,
	}
	var common bench.Options
	var cpo bench.CheckpointerOptions
	var sto bench.StoreOptions
	cp := &cobra.Command{
		Use:   "checkpointer",
		Short: "put, put_writes, get_tuple and list(10) on PostgreSQL or SQLite (--backend sqlite); --workload and --scale",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := refuseZero(cmd); err != nil {
				return err
			}
			o := cpo
			o.Options = common
			o.JSON = g.json
			// The options first, then the DSN: --backend sqlite needs none,
			// and a refused option is the error to report. A DSN's scheme
			// selects MongoDB or Redis, whose options are checked once it
			// is known.
			if o.Backend != "sqlite" {
				dsn, err := g.benchDSN()
				if err != nil {
					if cerr := o.Check(); cerr != nil {
						return benchErr(cerr)
					}
					return err
				}
				o.DSN = dsn
				if o.Backend, err = benchBackend(cmd, o.Backend, dsn); err != nil {
					return err
				}
			}
			if err := o.Check(); err != nil {
				return benchErr(err)
			}
			return benchErr(bench.RunCheckpointer(cmd.Context(), cmd.OutOrStdout(), o))
		},
	}
	f := cp.Flags()
	f.StringVar(&cpo.Workload, "workload", "", `"messages": a messages channel gaining one ~500-byte message per step over 200 steps (put_messages, get_messages_50, get_messages_200)`)
	f.IntVar(&cpo.Scale, "scale", 0, "seed this many checkpoints (over --threads threads) and measure get_tuple, get_tuple_by_id, list10 and put next to --scale-base checkpoints of the same thread shape (0: off)")
	f.IntVar(&cpo.Threads, "threads", bench.DefaultThreads, "with --scale: threads the checkpoints are spread over")
	f.IntVar(&cpo.ScaleBase, "scale-base", bench.DefaultScaleBase, "with --scale: checkpoints of the small data set measured beside it")
	f.StringVar(&common.Backend, "backend", "postgres", `"postgres", "sqlite" (a temporary file; raw SQL on the same file as baseline), "mongodb" or "redis" (--dsn mongodb://… or redis://…, which also select them; the Go driver or go-redis as baseline)`)
	f.StringVar(&common.JSDir, "js", "", "also measure JS LangGraph's saver (node): PostgresSaver from interop/js, or on mongodb:// MongoDBSaver from backends/mongodb/mongosaver/testdata/js — a directory holding bench.mjs and its node_modules")
	st := &cobra.Command{
		Use:   "store",
		Short: "put (with embedding), get and search k=10 over 10 000 items on PostgreSQL + pgvector (or SQLite)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o := sto
			o.Options = common
			o.JSON = g.json
			if o.Backend != "sqlite" { // SQLite benches a temporary file
				dsn, err := g.benchDSN()
				if err != nil {
					return err
				}
				o.DSN = dsn
			}
			if err := refuseZero(cmd); err != nil {
				return err
			}
			return benchErr(bench.RunStore(cmd.Context(), cmd.OutOrStdout(), o))
		},
	}
	for _, c := range []*cobra.Command{cp, st} {
		c.Flags().DurationVar(&common.Duration, "duration", bench.DefaultDuration, "how long each row runs")
		c.Flags().IntVar(&common.Concurrency, "concurrency", bench.DefaultConcurrency, "operations in flight for the concurrent rows")
		c.Flags().StringSliceVar(&common.Ops, "ops", nil, "run only these operations (comma separated; default all)")
	}
	// --items is the store's. The checkpointer accepted it once and
	// ignored it: still accepted, so scripts that pass it run, but no
	// longer listed in its help.
	var ignoredItems int
	cp.Flags().IntVar(&ignoredItems, "items", bench.DefaultItems, "ignored (bench store's)")
	_ = cp.Flags().MarkDeprecated("items", "it sets bench store's item count; bench checkpointer ignores it")
	st.Flags().IntVar(&sto.Items, "items", bench.DefaultItems, "items to search over")
	st.Flags().StringVar(&common.JSDir, "js", "", "also measure JS LangGraph's PostgresStore (node; PostgreSQL only), from this directory holding bench.mjs and its node_modules (interop/js)")
	st.Flags().IntVar(&sto.Dims, "dims", bench.DefaultDims, "embedding dimensions (offline hashing embedder)")
	st.Flags().StringVar(&common.Backend, "backend", "postgres", "postgres (--dsn) or sqlite (a temporary file)")
	st.Flags().IntVar(&sto.Topics, "topics", 0, "sqlite: instead of the throughput rows, search latency, first search after open, recall@10 and RSS over --items vectors in this many dense topics, beside the same count spread over items/100 topics (0: off)")
	cmd.AddCommand(cp, st)
	return cmd
}

// refuseZero refuses a numeric flag given as 0: the bench package reads a
// zero option as its default, but on the command line a zero is a mistake.
func refuseZero(cmd *cobra.Command) error {
	for _, name := range []string{"duration", "concurrency", "items", "dims", "threads", "scale-base"} {
		f := cmd.Flags().Lookup(name)
		if f == nil || !f.Changed || (f.Value.String() != "0" && f.Value.String() != "0s") {
			continue
		}
		switch name {
		case "dims":
			return usagef("--dims 0: want 1..%d", bench.MaxDims)
		case "duration":
			return usagef("--duration 0s: want more than 0")
		}
		return usagef("--%s 0: want at least 1", name)
	}
	return nil
}

// benchErr makes the options the bench refuses usage errors (exit 2).
func benchErr(err error) error {
	if errors.Is(err, bench.ErrOptions) {
		return usageError{err}
	}
	return err
}

func (g *globals) benchDSN() (string, error) {
	cfg, err := g.config()
	if err != nil {
		return "", err
	}
	if cfg.DSN == "" {
		return "", usagef("bench needs PostgreSQL (or, for bench checkpointer, MongoDB or Redis): pass --dsn or set MEMVAULT_DSN")
	}
	return cfg.DSN, nil
}

// benchBackend is the checkpointer bench's backend: --backend when given
// (its DSN must be of that server), else the one dsn's scheme names.
func benchBackend(cmd *cobra.Command, backend, dsn string) (string, error) {
	scheme := vault.DSNScheme(dsn)
	var fromDSN string
	switch {
	case strings.HasPrefix(scheme, "mongodb"):
		fromDSN = bench.BackendMongoDB
	case strings.HasPrefix(scheme, "redis"):
		fromDSN = bench.BackendRedis
	default:
		fromDSN = "postgres"
	}
	if !cmd.Flags().Changed("backend") {
		return fromDSN, nil
	}
	if backend != fromDSN {
		return "", usagef("--backend %s with a %s DSN (%s)", backend, fromDSN, vault.RedactDSN(dsn))
	}
	return backend, nil
}
