package sqlite

import (
	"context"
	"fmt"
	"iter"

	"github.com/memvault/memvault/checkpointer"
)

var _ checkpointer.ThreadLister = (*Saver)(nil)

// ListThreads implements checkpointer.ThreadLister with one aggregate
// query over the checkpoint rows.
func (s *Saver) ListThreads(ctx context.Context) iter.Seq2[checkpointer.ThreadInfo, error] {
	return func(yield func(checkpointer.ThreadInfo, error) bool) {
		rows, err := s.db.Reader().QueryContext(ctx, `SELECT thread_id, count(*), max(checkpoint_id) FROM checkpoints
GROUP BY thread_id ORDER BY max(checkpoint_id) DESC, thread_id`)
		if err != nil {
			yield(checkpointer.ThreadInfo{}, fmt.Errorf("sqlite: list threads: %w", err))
			return
		}
		defer rows.Close()
		for rows.Next() {
			var ti checkpointer.ThreadInfo
			if err := rows.Scan(&ti.ThreadID, &ti.Checkpoints, &ti.LatestCheckpointID); err != nil {
				yield(checkpointer.ThreadInfo{}, fmt.Errorf("sqlite: list threads: %w", err))
				return
			}
			if !yield(ti, nil) {
				return
			}
		}
		if err := rows.Err(); err != nil {
			yield(checkpointer.ThreadInfo{}, fmt.Errorf("sqlite: list threads: %w", err))
		}
	}
}
