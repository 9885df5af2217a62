package core

import (
	"context"
	"fmt"

	"github.com/memvault/memvault/checkpointer"
)

// PutImportItem writes one imported checkpoint through saver's Put and
// PutWrites: the checkpoint under its parent, then each task's writes. The
// import paths of the drivers that build an import from their own Put and
// PutWrites (on a scratch copy or inside a transaction) and threadfile's
// fallback for any Saver all write items this one way.
func PutImportItem(ctx context.Context, saver checkpointer.Saver, it checkpointer.ImportCheckpoint) error {
	if it.Checkpoint != nil {
		parent := checkpointer.Config{ThreadID: it.ThreadID, CheckpointNS: it.CheckpointNS, CheckpointID: it.ParentID}
		if _, err := saver.Put(ctx, parent, it.Checkpoint, it.Metadata, it.NewVersions); err != nil {
			return err
		}
	}
	cfg := checkpointer.Config{ThreadID: it.ThreadID, CheckpointNS: it.CheckpointNS, CheckpointID: it.ID}
	for _, w := range it.Writes {
		if err := saver.PutWrites(ctx, cfg, w.Writes, w.TaskID, ""); err != nil {
			return fmt.Errorf("writes of %q: %w", w.TaskID, err)
		}
	}
	return nil
}
