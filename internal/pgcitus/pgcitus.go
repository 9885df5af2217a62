package pgcitus

import (
	"context"
	"fmt"

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

// Distribute makes tables (qualified names, as SQL spells them) Citus
// distributed tables by column: the first in a colocation group of its
// own kind, the others colocated with it, so that the rows of one value of
// column live on one shard in every table. Tables already distributed are
// left as they are; with none left it only reads. Citus copies the rows a
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

// undistributed returns the tables that are not distributed yet, in order.
func undistributed(ctx context.Context, q pgdb.Querier, tables []string) ([]string, error) {
	var todo []string
	for _, table := range tables {
		var done bool
		if err := q.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_dist_partition WHERE logicalrelid = to_regclass($1))`,
			table).Scan(&done); err != nil {
			return nil, fmt.Errorf("citus: is %s distributed: %w", table, err)
		}
		if !done {
			todo = append(todo, table)
		}
	}
	return todo, nil
}
