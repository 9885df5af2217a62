package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/checkpointer/internal/core"
)

// deleteCheckpoint is the core's DeleteCheckpoint hook (core.Hooks), for
// checkpointer.CheckpointDeleter: one statement deletes the checkpoint, its
// writes, and the blob rows of its channel versions that no other
// checkpoint of its namespace uses.
func (s *Saver) deleteCheckpoint(ctx context.Context, thread, ns, id string) error {
	return s.deleteCheckpointOn(ctx, s.db, thread, ns, id)
}

// DeleteCheckpointTx is DeleteCheckpoint inside the caller's transaction.
func (s *Saver) DeleteCheckpointTx(ctx context.Context, tx pgx.Tx, cfg checkpointer.Config) error {
	return core.DeleteCheckpoint(ctx, "postgres", cfg, func(ctx context.Context, thread, ns, id string) error {
		return s.deleteCheckpointOn(ctx, tx, thread, ns, id)
	})
}

func (s *Saver) deleteCheckpointOn(ctx context.Context, db DB, thread, ns, id string) error {
	// Lock first (one round trip still): a put continuing the checkpoint
	// commits before the delete works out which values stay, or finds its
	// parent gone (see queries.putCkpt).
	b := &pgx.Batch{}
	b.Queue(s.q.lockCkpt, thread, ns, id)
	b.Queue(s.q.ckptDelete, thread, ns, id)
	if err := runBatch(ctx, db, b); err != nil {
		return fmt.Errorf("postgres: delete checkpoint: %w", err)
	}
	return nil
}
