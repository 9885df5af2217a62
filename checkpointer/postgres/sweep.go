package postgres

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/jackc/pgx/v5"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/checkpointer/internal/core"
)

// Sweep implements checkpointer.Sweeper: the core pages through the
// threads; each batch is one transaction of two round trips (see
// sweepBatch). Between batches the sweep holds nothing, so writers of
// other threads wait at most one batch's row locks (they never wait on
// rows of threads the batch does not touch).
//
// A thread resumed while a batch judges it is never left with a
// checkpoint lacking values: the batch waits for a put continuing a
// checkpoint it is about to remove and then sees the thread active again
// (or the value still referenced), and a put continuing a checkpoint the
// batch removed fails with checkpointer.ErrParentMissing.
func (s *Saver) Sweep(ctx context.Context, policy checkpointer.RetentionPolicy, opt checkpointer.SweepOptions) (checkpointer.SweepReport, error) {
	return core.Sweep(ctx, "postgres", core.SweepHooks{Threads: s.sweepThreads, Batch: s.sweepBatch}, policy, opt)
}

// sweepThreads is the Threads hook of Sweep: one range scan of the
// primary key.
func (s *Saver) sweepThreads(ctx context.Context, after string, limit int) ([]string, error) {
	rows, err := s.db.Query(ctx, s.q.sweepThreads, after, limit)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}

// errDryRun rolls a dry run's transaction back.
var errDryRun = errors.New("postgres: dry run")

// sweepBatch is the Batch hook of Sweep, in one transaction rolled back
// for a dry run: first sweepLock locks the checkpoints the rule may
// remove (waiting for the puts continuing them) and says which; then, in
// one round trip, the idle threads' statement (which judges idleness
// again, from a snapshot that includes those puts) and the keep-latest
// one (which removes exactly the rows locked, and keeps every value a
// remaining checkpoint references). Each statement's deletes share one
// snapshot, so each works out what stays from the rows as they were
// before it and counts what it removed.
func (s *Saver) sweepBatch(ctx context.Context, threads []string, rule core.SweepRule, dryRun bool) (checkpointer.SweepReport, error) {
	var rep checkpointer.SweepReport
	var floor *string
	if rule.Floor != "" {
		floor = &rule.Floor
	}
	err := pgx.BeginFunc(ctx, s.db, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, s.q.sweepLock, threads, floor, int32(rule.KeepLatest))
		if err != nil {
			return err
		}
		var idle, pt, pns, pid []string
		var thread, ns, id string
		var isIdle bool
		_, err = pgx.ForEachRow(rows, []any{&thread, &ns, &id, &isIdle}, func() error {
			if isIdle {
				idle = append(idle, thread)
			} else {
				pt, pns, pid = append(pt, thread), append(pns, ns), append(pid, id)
			}
			return nil
		})
		if err != nil {
			return err
		}
		b := &pgx.Batch{}
		if len(idle) > 0 {
			b.Queue(s.q.sweepIdle, idle, rule.Floor).QueryRow(func(row pgx.Row) error {
				return row.Scan(&rep.ThreadsDeleted, &rep.Checkpoints, &rep.Writes, &rep.Blobs)
			})
		}
		if len(pt) > 0 {
			b.Queue(s.q.deleteLocked, slices.Compact(slices.Clone(pt)), pt, pns, pid).QueryRow(func(row pgx.Row) error {
				var c, w, bl int64
				if err := row.Scan(&c, &w, &bl); err != nil {
					return err
				}
				rep.Checkpoints, rep.Writes, rep.Blobs = rep.Checkpoints+c, rep.Writes+w, rep.Blobs+bl
				return nil
			})
		}
		if b.Len() > 0 {
			if err := tx.SendBatch(ctx, b).Close(); err != nil {
				return err
			}
		}
		if dryRun {
			return errDryRun
		}
		return nil
	})
	if err != nil && !errors.Is(err, errDryRun) {
		return checkpointer.SweepReport{}, fmt.Errorf("batch: %w", err)
	}
	return rep, nil
}
