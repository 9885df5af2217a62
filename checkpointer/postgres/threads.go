package postgres

import (
	"context"
	"iter"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/checkpointer/internal/core"
	"github.com/memvault/memvault/internal/pgdb"
)

// ListThreads implements checkpointer.ThreadLister with one aggregate
// query over the checkpoint rows, streamed.
func (s *Saver) ListThreads(ctx context.Context) iter.Seq2[checkpointer.ThreadInfo, error] {
	return core.ListThreadsSQL(ctx, "postgres", pgdb.Exec{DB: s.db}, s.q.checkpoints)
}
