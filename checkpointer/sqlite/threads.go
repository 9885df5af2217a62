package sqlite

import (
	"context"
	"iter"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/checkpointer/internal/core"
)

// ListThreads implements checkpointer.ThreadLister with one aggregate
// query over the checkpoint rows.
func (s *Saver) ListThreads(ctx context.Context) iter.Seq2[checkpointer.ThreadInfo, error] {
	return core.ListThreadsSQL(ctx, "sqlite", s.sqlDB(), "checkpoints")
}
