package postgres

import (
	"context"

	"github.com/memvault/memvault/checkpointer/internal/core"
	"github.com/memvault/memvault/internal/pgdb"
	"github.com/memvault/memvault/reencrypt"
)

// Reencrypt implements checkpointer.Reencrypter: every channel value and
// pending write not sealed under the serializer's primary key is sealed
// again, bound to the same row. Rows are read in primary-key order, a batch
// at a time, and each batch is written back in one transaction (a savepoint
// of the caller's, when the saver runs in one) with compare-and-swap
// updates, so rows written meanwhile (already under the primary key) are
// left alone and an interrupted run can simply be started again. LangGraph
// "aes" rows from Python are rewritten in the format this saver writes.
func (s *Saver) Reencrypt(ctx context.Context, opt reencrypt.Options) (reencrypt.Stats, error) {
	return core.ReencryptSQL(ctx, "postgres", pgdb.Exec{DB: s.db}, s.serde, opt, s.q.blobs, s.q.writes)
}
