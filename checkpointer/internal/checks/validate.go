package checks

import (
	"fmt"

	"github.com/memvault/memvault/checkpointer"
)

// ValidateThreadIDs checks every id of a list of threads (Prune) with
// checkpointer.ValidateThreadID: non-empty text of any length, so that a
// thread stored with a longer id before the limit can still be deleted.
func ValidateThreadIDs(ids []string) error {
	for _, id := range ids {
		if err := checkpointer.ValidateThreadID(id); err != nil {
			return err
		}
	}
	return nil
}

// ValidateRunIDs checks the run ids of DeleteForRuns as text only: a run id
// lives in metadata, not in an index, so MaxIDBytes does not bound it (a
// longer one a writer stored can still be deleted).
func ValidateRunIDs(ids []string) error {
	for _, id := range ids {
		if err := checkpointer.ValidateText("run id", id); err != nil {
			return err
		}
	}
	return nil
}

// ValidateConfig checks a config that finds one thread (GetTuple,
// DeleteCheckpoint): a non-empty thread id and every coordinate valid
// text. The length is not bounded (checkpointer.MaxIDBytes bounds what is
// written): a longer id finds nothing, or a row an earlier version stored
// without the limit.
func ValidateConfig(cfg checkpointer.Config) error {
	if err := checkpointer.ValidateThreadID(cfg.ThreadID); err != nil {
		return err
	}
	if err := checkpointer.ValidateText("checkpoint namespace", cfg.CheckpointNS); err != nil {
		return err
	}
	return checkpointer.ValidateText("checkpoint id", cfg.CheckpointID)
}

// ValidateStoredConfig checks the config of a write (Put, PutWrites), whose
// coordinates are stored: a non-empty thread id, and every coordinate a
// valid identifier (checkpointer.ValidateID: text of at most MaxIDBytes).
func ValidateStoredConfig(cfg checkpointer.Config) error {
	if err := checkpointer.ValidateStoredThreadID(cfg.ThreadID); err != nil {
		return err
	}
	if err := checkpointer.ValidateID("checkpoint namespace", cfg.CheckpointNS); err != nil {
		return err
	}
	return checkpointer.ValidateID("checkpoint id", cfg.CheckpointID)
}

// ValidateListConfig checks List's config. A nil config lists every thread,
// and so does a config without a thread id when opt.AllThreads says so:
// those are the explicit ways to ask for all of them. Any other config must
// name its thread, so that an unset variable cannot turn "this thread" into
// "every thread". Coordinates are checked as text only, like
// ValidateConfig's.
func ValidateListConfig(cfg *checkpointer.Config, opt checkpointer.ListOptions) error {
	if cfg != nil {
		if cfg.ThreadID == "" && !opt.AllThreads {
			return checkpointer.ErrMissingThreadID
		}
		if err := checkpointer.ValidateText("thread id", cfg.ThreadID); err != nil {
			return err
		}
		if err := checkpointer.ValidateText("checkpoint namespace", cfg.CheckpointNS); err != nil {
			return err
		}
		if err := checkpointer.ValidateText("checkpoint id", cfg.CheckpointID); err != nil {
			return err
		}
	}
	if opt.Before != nil {
		if err := checkpointer.ValidateText("before checkpoint id", opt.Before.CheckpointID); err != nil {
			return err
		}
	}
	return nil
}

// ValidatePut checks the arguments of Saver.Put; every backend calls it
// first so that bad input fails the same way everywhere.
func ValidatePut(cfg checkpointer.Config, cp *checkpointer.Checkpoint, newVersions map[string]string) error {
	if err := ValidateStoredConfig(cfg); err != nil {
		return err
	}
	if cp == nil {
		return checkpointer.ErrNilCheckpoint
	}
	if cp.ID == "" {
		return fmt.Errorf("%w: empty id", checkpointer.ErrInvalidCheckpoint)
	}
	if err := checkpointer.ValidateID("checkpoint id", cp.ID); err != nil {
		return err
	}
	if err := validateVersions("channel_versions", cp.ChannelVersions); err != nil {
		return err
	}
	if err := validateVersions("new versions", newVersions); err != nil {
		return err
	}
	for ch := range cp.ChannelValues {
		if err := checkpointer.ValidateID("channel name", ch); err != nil {
			return err
		}
	}
	for node, seen := range cp.VersionsSeen {
		if err := checkpointer.ValidateID("node name", node); err != nil {
			return err
		}
		if err := validateVersions("versions_seen", seen); err != nil {
			return err
		}
	}
	return nil
}

// validateVersions checks the channel names and versions of one map (where
// says which) with checkpointer.ValidateVersion, the rule thread file
// imports apply too.
func validateVersions(where string, versions map[string]string) error {
	for ch, v := range versions {
		if err := checkpointer.ValidateID("channel name", ch); err != nil {
			return err
		}
		if err := checkpointer.ValidateVersion("channel version", v); err != nil {
			return fmt.Errorf("%s[%q]: %w", where, ch, err)
		}
	}
	return nil
}

// ValidatePutWrites checks the arguments of Saver.PutWrites.
func ValidatePutWrites(cfg checkpointer.Config, writes []checkpointer.Write, taskID, taskPath string) error {
	if err := ValidateStoredConfig(cfg); err != nil {
		return err
	}
	if cfg.CheckpointID == "" {
		return checkpointer.ErrMissingCheckpointID
	}
	if err := checkpointer.ValidateID("task id", taskID); err != nil {
		return err
	}
	if err := checkpointer.ValidateID("task path", taskPath); err != nil {
		return err
	}
	for _, w := range writes {
		if err := checkpointer.ValidateID("channel name", w.Channel); err != nil {
			return err
		}
	}
	return nil
}
