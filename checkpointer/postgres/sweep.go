package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/checkpointer/internal/core"
)

// Sweep implements checkpointer.Sweeper: the core pages through the
// threads; each batch is one transaction of at most two statements, sent
// in one round trip (see sweepBatch). Between batches the sweep holds
// nothing, so writers of other threads wait at most one batch's row locks
// (they never wait on rows of threads the batch does not touch).
//
// A thread resumed in the instant a sweep finds it idle can lose the
// values its new checkpoint shares with its old ones (the new
// checkpoint's own values and the checkpoint itself stay): choose an
// IdleTTL far longer than an agent's pauses.
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

// sweepBatch is the Batch hook of Sweep: the idle threads' statement and
// the keep-latest one (each only when its rule is set) in one
// transaction, rolled back for a dry run. Each statement's deletes share
// one snapshot, so each works out what stays from the rows as they were
// before it and counts what it removed.
func (s *Saver) sweepBatch(ctx context.Context, threads []string, rule core.SweepRule, dryRun bool) (checkpointer.SweepReport, error) {
	var rep checkpointer.SweepReport
	err := pgx.BeginFunc(ctx, s.db, func(tx pgx.Tx) error {
		b := &pgx.Batch{}
		if rule.Floor != "" {
			b.Queue(s.q.sweepIdle, threads, rule.Floor).QueryRow(func(row pgx.Row) error {
				return row.Scan(&rep.ThreadsDeleted, &rep.Checkpoints, &rep.Writes, &rep.Blobs)
			})
		}
		if rule.KeepLatest > 0 {
			b.Queue(s.q.sweepKeep, threads, rule.KeepLatest).QueryRow(func(row pgx.Row) error {
				var c, w, bl int64
				if err := row.Scan(&c, &w, &bl); err != nil {
					return err
				}
				rep.Checkpoints, rep.Writes, rep.Blobs = rep.Checkpoints+c, rep.Writes+w, rep.Blobs+bl
				return nil
			})
		}
		if err := tx.SendBatch(ctx, b).Close(); err != nil {
			return err
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
