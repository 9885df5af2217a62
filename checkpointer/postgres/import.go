package postgres

import (
	"context"
	"fmt"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/checkpointer/internal/core"
)

// ImportThread implements checkpointer.ThreadImporter: every Put and
// PutWrites of items runs in one transaction (a savepoint when the saver
// is itself on a transaction), committed only when all succeeded.
func (s *Saver) ImportThread(ctx context.Context, items []checkpointer.ImportCheckpoint) (err error) {
	tx, err := s.db.Begin(ctx)
	if err != nil {
		return fmt.Errorf("postgres: import: %w", err)
	}
	defer func() {
		if err != nil {
			_ = tx.Rollback(context.WithoutCancel(ctx))
		}
	}()
	// A copy of the saver on the transaction; integer versions are kept
	// as integers (see checkpointer.ThreadImporter).
	t := *s
	t.db, t.inTx, t.style = tx, true, checkpointer.VersionInt
	t.bindFront()
	for _, it := range items {
		if err := core.PutImportItem(ctx, &t, it); err != nil {
			return err
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("postgres: import: commit: %w", err)
	}
	return nil
}
