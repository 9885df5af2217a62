package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"strings"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/checkpointer/internal/core"
)

// Sweep implements checkpointer.Sweeper: the core pages through the
// threads; each batch is one write transaction of a few set-based
// statements (see sweepBatch), so a sweep of a large database lets other
// writers in between batches.
func (s *Saver) Sweep(ctx context.Context, policy checkpointer.RetentionPolicy, opt checkpointer.SweepOptions) (checkpointer.SweepReport, error) {
	return core.Sweep(ctx, "sqlite", core.SweepHooks{Threads: s.sweepThreads, Batch: s.sweepBatch, DefaultBatch: SweepBatch}, policy, opt)
}

// SweepBatch is the SQLite saver's number of threads per sweep
// transaction when SweepOptions.BatchThreads is 0. SQLite has one writer,
// so every put waits for the batch in progress: at 100 threads of 100
// checkpoints a put's p99 reached 427 ms during a sweep, at 10 threads
// 35 ms (BenchmarkPutDuringSweep).
const SweepBatch = 10

// sweepThreads is the Threads hook of Sweep: one range scan of the
// primary key.
func (s *Saver) sweepThreads(ctx context.Context, after string, limit int) ([]string, error) {
	rs, err := s.db.Reader().QueryContext(ctx, `SELECT DISTINCT thread_id FROM checkpoints
		WHERE thread_id > ? ORDER BY thread_id LIMIT ?`, after, limit)
	if err != nil {
		return nil, err
	}
	return scanStrings(rs)
}

// errDryRun rolls a dry run's transaction back.
var errDryRun = errors.New("sqlite: dry run")

// uuid6Glob matches the ids checkpointer.IsDatableID accepts.
var uuid6Glob = func() string {
	h := func(n int) string { return strings.Repeat("[0-9a-f]", n) }
	return h(8) + "-" + h(4) + "-6" + h(3) + "-" + h(4) + "-" + h(12)
}()

// inThreads is the set of thread ids given as one JSON array parameter,
// so that every batch size shares one statement.
const inThreads = `(SELECT value FROM json_each(?1))`

// ranked numbers the checkpoints of the threads in ?1 newest first within
// each (thread, namespace); ?2 is the number kept.
const ranked = `WITH r AS (SELECT thread_id AS t, checkpoint_ns AS ns, checkpoint_id AS id, parent_checkpoint_id AS p,
	row_number() OVER (PARTITION BY thread_id, checkpoint_ns ORDER BY checkpoint_id DESC) AS rn
	FROM checkpoints WHERE thread_id IN ` + inThreads + `) `

// sweepBatch is the Batch hook of Sweep, in one write transaction (rolled
// back for a dry run): first the idle threads go whole (one aggregate
// finds them, three deletes remove them); then, for KeepLatest, one
// statement finds the threads with checkpoints beyond the newest N, and
// three statements delete those checkpoints' writes, the checkpoints, and
// the values no remaining checkpoint references. The statement count does
// not depend on the number of threads or checkpoints.
func (s *Saver) sweepBatch(ctx context.Context, threads []string, rule core.SweepRule, dryRun bool) (checkpointer.SweepReport, error) {
	var rep checkpointer.SweepReport
	batch, err := json.Marshal(threads)
	if err != nil {
		return rep, err
	}
	err = s.db.Write(ctx, func(tx *sql.Tx) error {
		if rule.Floor != "" {
			rs, err := tx.QueryContext(ctx, `SELECT thread_id FROM checkpoints WHERE thread_id IN `+inThreads+`
				GROUP BY thread_id HAVING max(checkpoint_id) < ?2 AND min(checkpoint_id GLOB ?3) = 1`,
				string(batch), rule.Floor, uuid6Glob)
			if err != nil {
				return err
			}
			idle, err := scanStrings(rs)
			if err != nil {
				return err
			}
			if len(idle) > 0 {
				arg, err := json.Marshal(idle)
				if err != nil {
					return err
				}
				rep.ThreadsDeleted = int64(len(idle))
				for _, d := range []struct {
					table string
					n     *int64
				}{{"checkpoints", &rep.Checkpoints}, {"checkpoint_writes", &rep.Writes}, {"checkpoint_blobs", &rep.Blobs}} {
					if *d.n, err = execN(ctx, tx, `DELETE FROM `+d.table+` WHERE thread_id IN `+inThreads, string(arg)); err != nil {
						return err
					}
				}
			}
		}
		if rule.KeepLatest > 0 {
			rs, err := tx.QueryContext(ctx, ranked+`SELECT DISTINCT t FROM r WHERE rn > ?2`, string(batch), rule.KeepLatest)
			if err != nil {
				return err
			}
			over, err := scanStrings(rs)
			if err != nil {
				return err
			}
			if len(over) > 0 {
				r, err := keepLatest(ctx, tx, over, rule.KeepLatest)
				if err != nil {
					return err
				}
				rep.Add(r)
			}
		}
		if dryRun {
			return errDryRun
		}
		return nil
	})
	if err != nil && !errors.Is(err, errDryRun) {
		return checkpointer.SweepReport{}, err
	}
	return rep, nil
}

// keepLatest deletes, in threads, every checkpoint but the newest keep of
// each namespace, their writes and the values left unreferenced. Writes go
// first, while the checkpoints they hang from can still be ranked; the
// __pregel_tasks writes that a kept v<4 checkpoint reads as its pending
// sends (they belong to its parent) stay.
func keepLatest(ctx context.Context, tx *sql.Tx, threads []string, keep int) (checkpointer.SweepReport, error) {
	var rep checkpointer.SweepReport
	arg, err := json.Marshal(threads)
	if err != nil {
		return rep, err
	}
	if rep.Writes, err = execN(ctx, tx, ranked+`DELETE FROM checkpoint_writes
		WHERE thread_id IN `+inThreads+` AND (thread_id, checkpoint_ns, checkpoint_id) IN (SELECT t, ns, id FROM r WHERE rn > ?2)
		AND NOT (channel = '`+checkpointer.ChannelTasks+`' AND (thread_id, checkpoint_ns, checkpoint_id) IN (
			SELECT r.t, r.ns, r.p FROM r JOIN checkpoints k ON k.thread_id = r.t AND k.checkpoint_ns = r.ns AND k.checkpoint_id = r.id
			WHERE r.rn <= ?2 AND r.p IS NOT NULL
				AND coalesce(json_extract(k.checkpoint, '$.v'), 0) < 4))`,
		string(arg), keep); err != nil {
		return rep, err
	}
	if rep.Checkpoints, err = execN(ctx, tx, ranked+`DELETE FROM checkpoints
		WHERE thread_id IN `+inThreads+` AND (thread_id, checkpoint_ns, checkpoint_id) IN (SELECT t, ns, id FROM r WHERE rn > ?2)`,
		string(arg), keep); err != nil {
		return rep, err
	}
	rep.Blobs, err = gcBlobs(ctx, tx, string(arg))
	return rep, err
}

// gcBlobs deletes, in one statement, the values of the threads in the JSON
// array threads that no checkpoint of their thread and namespace
// references by its channel versions. The live set is an uncorrelated
// subquery, which SQLite builds once as an index: the cost is one pass
// over the checkpoints and one over the values, not their product.
// Versions written as JSON numbers (JS) compare as their integer text, as
// core.DecodeCheckpointJSON reads them.
func gcBlobs(ctx context.Context, tx *sql.Tx, threads string) (int64, error) {
	return execN(ctx, tx, `DELETE FROM checkpoint_blobs WHERE thread_id IN `+inThreads+`
		AND (thread_id, checkpoint_ns, channel, version) NOT IN (
			SELECT c.thread_id, c.checkpoint_ns, cv.key,
				CASE cv.type WHEN 'real' THEN CAST(CAST(cv.value AS INTEGER) AS TEXT) ELSE CAST(cv.value AS TEXT) END
			FROM checkpoints c, json_each(c.checkpoint, '$.channel_versions') cv
			WHERE c.thread_id IN `+inThreads+`)`, threads)
}

// execN runs a statement and returns the rows it changed.
func execN(ctx context.Context, tx *sql.Tx, query string, args ...any) (int64, error) {
	res, err := tx.ExecContext(ctx, query, args...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// scanStrings reads a one-column result and closes it.
func scanStrings(rs *sql.Rows) ([]string, error) {
	defer rs.Close()
	var out []string
	for rs.Next() {
		var v string
		if err := rs.Scan(&v); err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rs.Err()
}
