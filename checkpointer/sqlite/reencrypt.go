package sqlite

import (
	"context"

	"github.com/memvault/memvault/checkpointer/internal/core"
	"github.com/memvault/memvault/reencrypt"
)

// Reencrypt implements checkpointer.Reencrypter: every channel value and
// pending write not sealed under the serializer's primary key is sealed
// again, bound to the same row, in batches of one write transaction each.
// A row changed by someone else between read and write is left as it is
// (it was just written, so under the primary key). Running it again after
// an interruption continues where it stopped.
//
// Unless opt.DeferCompaction, a run that is not a dry run ends by
// compacting the database file (VACUUM, then emptying the write-ahead
// log): SQLite leaves images of rewritten rows in its pages, which the old
// key still opens. If a reader of another process keeps the log from
// being emptied, the error wraps reencrypt.ErrCompactPending: run
// Reencrypt again once it is done.
func (s *Saver) Reencrypt(ctx context.Context, opt reencrypt.Options) (reencrypt.Stats, error) {
	return core.ReencryptSQL(ctx, "sqlite", s.sqlDB(), s.serde, opt, "checkpoint_blobs", "checkpoint_writes")
}
