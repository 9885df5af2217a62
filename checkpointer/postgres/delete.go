package postgres

import (
	"context"
	"fmt"

	"github.com/memvault/memvault/checkpointer/internal/checks"

	"github.com/jackc/pgx/v5"

	"github.com/memvault/memvault/checkpointer"
)

var _ checkpointer.CheckpointDeleter = (*Saver)(nil)

// DeleteCheckpoint implements checkpointer.CheckpointDeleter in one
// statement: the checkpoint, its writes, and the blob rows of its channel
// versions that no other checkpoint of its namespace uses.
func (s *Saver) DeleteCheckpoint(ctx context.Context, cfg checkpointer.Config) error {
	return s.deleteCheckpoint(ctx, s.db, cfg)
}

// DeleteCheckpointTx is DeleteCheckpoint inside the caller's transaction.
func (s *Saver) DeleteCheckpointTx(ctx context.Context, tx pgx.Tx, cfg checkpointer.Config) error {
	return s.deleteCheckpoint(ctx, tx, cfg)
}

func (s *Saver) deleteCheckpoint(ctx context.Context, db DB, cfg checkpointer.Config) error {
	if err := checks.ValidateDeleteCheckpoint(cfg); err != nil {
		return fmt.Errorf("postgres: delete checkpoint: %w", err)
	}
	if _, err := db.Exec(ctx, s.q.ckptDelete, cfg.ThreadID, cfg.CheckpointNS, cfg.CheckpointID); err != nil {
		return fmt.Errorf("postgres: delete checkpoint: %w", err)
	}
	return nil
}
