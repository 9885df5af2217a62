package pgcitus

import (
	"context"
	"fmt"
	"slices"

	"github.com/jackc/pgx/v5"

	"github.com/memvault/memvault/internal/pgdb"
	"github.com/memvault/memvault/internal/pgmigrate"
)

// InstalledSQL is a statement whose one boolean says whether the citus
// extension exists in the database: it does on a coordinator (and on
// workers, which memvault is never pointed at).
const InstalledSQL = `SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_extension WHERE extname = 'citus')`

// Installed reports whether the database q reaches is a Citus coordinator
// (InstalledSQL).
func Installed(ctx context.Context, q pgdb.Querier) (bool, error) {
	var ok bool
	err := q.QueryRow(ctx, InstalledSQL).Scan(&ok)
	return ok, err
}

// Topology is what a backend knows of its database's topology: whether it
// is a Citus coordinator. A backend value (a Saver, a Store) holds one,
// shared by the drivers it makes, including those on a caller's
// transaction. The question is asked once, the first time a statement
// needs the answer, and the answer kept: a database becomes a coordinator
// by CREATE EXTENSION citus before Setup, not under running processes. A
// question that failed is not remembered and reads as plain PostgreSQL:
// the statement that asked then fails or succeeds on its own.
type Topology struct {
	citus pgdb.Probe
}

// Distributed reports whether the database q reaches is a Citus
// coordinator, asking it the first time (see Topology). A nil Topology
// is plain PostgreSQL's.
func (t *Topology) Distributed(ctx context.Context, q pgdb.Querier) bool {
	if t == nil {
		return false
	}
	ok, _ := t.citus.Ask(ctx, q, InstalledSQL)
	return ok
}

// Known reports the answer Distributed (or Setup) got, without asking:
// false until one has.
func (t *Topology) Known() bool { return t != nil && t.citus.Yes() }

// Setup is a backend's Setup step on Citus: on a coordinator it
// distributes tables by column (Distribute); on plain PostgreSQL it only
// asks. Unlike Distributed, a failed question is an error.
func (t *Topology) Setup(ctx context.Context, db pgdb.DB, column string, tables ...string) error {
	ok, err := t.citus.Ask(ctx, db, InstalledSQL)
	if err != nil {
		return fmt.Errorf("citus: is the extension installed: %w", err)
	}
	if !ok {
		return nil
	}
	return Distribute(ctx, db, column, tables...)
}

// ShardFilter is the condition " AND col = ANY(param)" on a coordinator
// and "" otherwise (Known: ask Distributed first), param being the
// distribution values of a statement's rows. A statement whose rows come
// from arrays names its distribution column only through a join, and
// Citus prunes shards only by conditions on that column itself: with the
// condition the statement goes to the shards of its values, without it
// to every shard. It is left out on plain PostgreSQL, whose planner may
// take it for an index condition: in pgstore it read whole prefixes
// through store_prefix_idx instead of looking keys up by primary key (a
// delete of 10 keys among 30 000 items: 1.4-2.1 ms instead of 0.1-0.25
// ms).
func (t *Topology) ShardFilter(col, param string) string {
	if !t.Known() {
		return ""
	}
	return " AND " + col + " = ANY(" + param + ")"
}

// Forms is a statement in two forms: [0] for plain PostgreSQL, [1] for a
// Citus coordinator. A backend builds both once, with its table names,
// and picks one per call (Topology.Form): Citus refuses some plain forms
// (a LATERAL lookup across shards, FOR UPDATE over several shards) or
// routes them to every shard, and the Citus form may cost plain
// PostgreSQL a worse plan (see ShardFilter).
type Forms [2]string

// Form returns f's form for the database: the Citus one once Distributed
// (or Setup) has found a coordinator (Known: ask Distributed first), the
// plain one otherwise, and on a nil Topology.
func (t *Topology) Form(f Forms) string {
	if t.Known() {
		return f[1]
	}
	return f[0]
}

// EachValue calls queue for each distinct value of values, in sorted
// order. Citus runs a statement that locks rows (FOR UPDATE) only when it
// routes to one shard, so a lock over several distribution values is one
// statement per value; every locker sends them in one order, so that
// concurrent lockers do not deadlock.
func EachValue(values []string, queue func(value string)) {
	for _, v := range slices.Compact(slices.Sorted(slices.Values(values))) {
		queue(v)
	}
}

// EachGroup is EachValue for rows given as columns of equal length, the
// first holding their distribution values: queue gets, for each distinct
// value in sorted order, the columns of the rows that hold it, in their
// order. A statement taking its rows from arrays then runs once per value,
// routed to one shard.
func EachGroup(cols [][]string, queue func(group [][]string)) {
	at := make(map[string][]int)
	for i, v := range cols[0] {
		at[v] = append(at[v], i)
	}
	EachValue(cols[0], func(v string) {
		group := make([][]string, len(cols))
		for _, i := range at[v] {
			for c := range cols {
				group[c] = append(group[c], cols[c][i])
			}
		}
		queue(group)
	})
}

// QueueLock queues to b a statement sql that locks rows (FOR UPDATE)
// named by arrays: $1 the distinct distribution values of the rows, then
// cols, the rows' columns, the first holding their distribution values
// (none: every row of the values). On plain PostgreSQL it is one
// statement; on a coordinator (Known: ask Distributed first), which runs
// FOR UPDATE only in a statement routed to one shard, one per value with
// that value's rows, in sorted order (EachValue, EachGroup).
func (t *Topology) QueueLock(b *pgx.Batch, sql string, values []string, cols ...[]string) {
	queue := func(values []string, cols [][]string) {
		args := []any{values}
		for _, c := range cols {
			args = append(args, c)
		}
		b.Queue(sql, args...)
	}
	switch {
	case !t.Known():
		queue(values, cols)
	case len(cols) == 0:
		EachValue(values, func(v string) { queue([]string{v}, nil) })
	default:
		EachGroup(cols, func(g [][]string) { queue(g[0][:1], g) })
	}
}

// Distribute makes tables (qualified names, as SQL spells them) Citus
// distributed tables by column: the first in a colocation group of its
// own kind, the others colocated with it, so that the rows of one value of
// column live on one shard in every table (the first must exist). Tables
// already distributed, and tables that do not exist (a backend's optional
// ones), are left as they are; with none left it only reads. Citus copies the rows a
// table holds into its shards, so a database set up before Citus is
// distributed by the next Setup; the coordinator's own copy of those rows
// is then truncated (truncate_local_data_after_distributing_table): left
// there, invisible to every query, it would outlive every delete and
// erasure. It runs in one transaction holding memvault's setup lock
// (pgmigrate.LockKey), so concurrent Setups distribute each table once and
// the tables are distributed together or not at all.
func Distribute(ctx context.Context, db pgdb.DB, column string, tables ...string) error {
	todo, err := undistributed(ctx, db, tables)
	if err != nil || len(todo) == 0 {
		return err
	}
	return pgx.BeginFunc(ctx, db, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, pgmigrate.LockKey); err != nil {
			return fmt.Errorf("citus: lock: %w", err)
		}
		todo, err := undistributed(ctx, tx, tables) // again, under the lock
		if err != nil {
			return err
		}
		for _, table := range todo {
			colocate := "default"
			if table != tables[0] {
				colocate = tables[0]
			}
			if _, err := tx.Exec(ctx, `SELECT create_distributed_table($1::regclass, $2, colocate_with => $3)`,
				table, column, colocate); err != nil {
				return fmt.Errorf("citus: distribute %s by %s: %w", table, column, err)
			}
		}
		for _, table := range todo {
			if _, err := tx.Exec(ctx, `SELECT truncate_local_data_after_distributing_table($1::regclass)`, table); err != nil {
				return fmt.Errorf("citus: truncate the coordinator's copy of %s: %w", table, err)
			}
		}
		return nil
	})
}

// undistributed returns the tables that exist and are not distributed
// yet, in order.
func undistributed(ctx context.Context, q pgdb.Querier, tables []string) ([]string, error) {
	var todo []string
	for _, table := range tables {
		var exists, done bool
		if err := q.QueryRow(ctx, `SELECT to_regclass($1) IS NOT NULL, EXISTS (SELECT 1 FROM pg_dist_partition WHERE logicalrelid = to_regclass($1))`,
			table).Scan(&exists, &done); err != nil {
			return nil, fmt.Errorf("citus: is %s distributed: %w", table, err)
		}
		if exists && !done {
			todo = append(todo, table)
		}
	}
	return todo, nil
}
