package core

import (
	"context"
	"errors"
	"fmt"
	"iter"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/internal/sqlexec"
)

// errStopped ends a query whose consumer stopped iterating.
var errStopped = errors.New("iteration stopped")

// ListThreadsSQL is ListThreads for the SQL drivers: one aggregate query
// over the checkpoints table (as db names it), streamed, most recently
// checkpointed thread first. Nothing is decoded or decrypted. driver
// prefixes errors.
func ListThreadsSQL(ctx context.Context, driver string, db sqlexec.DB, checkpoints string) iter.Seq2[checkpointer.ThreadInfo, error] {
	return func(yield func(checkpointer.ThreadInfo, error) bool) {
		err := db.Query(ctx, `SELECT thread_id, count(*), max(checkpoint_id) FROM `+checkpoints+`
GROUP BY thread_id ORDER BY max(checkpoint_id) DESC, thread_id`, nil, func(scan func(...any) error) error {
			var ti checkpointer.ThreadInfo
			var n int64
			if err := scan(&ti.ThreadID, &n, &ti.LatestCheckpointID); err != nil {
				return err
			}
			ti.Checkpoints = int(n)
			if !yield(ti, nil) {
				return errStopped
			}
			return nil
		})
		if err != nil && !errors.Is(err, errStopped) {
			yield(checkpointer.ThreadInfo{}, fmt.Errorf("%s: list threads: %w", driver, err))
		}
	}
}
