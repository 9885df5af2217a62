package checks

import (
	"github.com/memvault/memvault/checkpointer"
)

// ValidateDeleteCheckpoint checks DeleteCheckpoint's config: ids valid
// text of any length (ValidateConfig), ThreadID and CheckpointID set.
func ValidateDeleteCheckpoint(cfg checkpointer.Config) error {
	if err := ValidateConfig(cfg); err != nil {
		return err
	}
	if cfg.CheckpointID == "" {
		return checkpointer.ErrMissingCheckpointID
	}
	return nil
}
