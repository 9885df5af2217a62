package checkpointer

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// ValidateText refuses an identifier PostgreSQL's text type cannot hold —
// one with a NUL byte or invalid UTF-8 — with ErrInvalidID; what names the
// field in the message. The text itself is not quoted: it may be binary.
func ValidateText(what, s string) error {
	if strings.IndexByte(s, 0) >= 0 {
		return fmt.Errorf("%w: %s contains a NUL byte", ErrInvalidID, what)
	}
	if !utf8.ValidString(s) {
		return fmt.Errorf("%w: %s is not valid UTF-8", ErrInvalidID, what)
	}
	return nil
}

// ValidateThreadID checks a thread id given alone (DeleteThread, CopyThread,
// Prune, …): it must be non-empty — an empty id never means "every thread" —
// and valid text.
func ValidateThreadID(id string) error {
	if id == "" {
		return ErrMissingThreadID
	}
	return ValidateText("thread id", id)
}

// ValidateThreadIDs checks every id of a list of threads (Prune); see
// ValidateThreadID.
func ValidateThreadIDs(ids []string) error {
	for _, id := range ids {
		if err := ValidateThreadID(id); err != nil {
			return err
		}
	}
	return nil
}

// ValidateRunIDs checks the run ids of DeleteForRuns as text.
func ValidateRunIDs(ids []string) error {
	for _, id := range ids {
		if err := ValidateText("run id", id); err != nil {
			return err
		}
	}
	return nil
}

// ValidateConfig checks a config that addresses one thread (GetTuple, Put,
// PutWrites): a non-empty thread id, and every coordinate valid text.
func ValidateConfig(cfg Config) error {
	if err := ValidateThreadID(cfg.ThreadID); err != nil {
		return err
	}
	if err := ValidateText("checkpoint namespace", cfg.CheckpointNS); err != nil {
		return err
	}
	return ValidateText("checkpoint id", cfg.CheckpointID)
}

// ValidateListConfig checks List's config. A nil config lists every thread,
// and so does a config without a thread id when opt.AllThreads says so:
// those are the explicit ways to ask for all of them. Any other config must
// name its thread, so that an unset variable cannot turn "this thread" into
// "every thread".
func ValidateListConfig(cfg *Config, opt ListOptions) error {
	if cfg != nil {
		if cfg.ThreadID == "" && !opt.AllThreads {
			return ErrMissingThreadID
		}
		if err := ValidateText("thread id", cfg.ThreadID); err != nil {
			return err
		}
		if err := ValidateText("checkpoint namespace", cfg.CheckpointNS); err != nil {
			return err
		}
		if err := ValidateText("checkpoint id", cfg.CheckpointID); err != nil {
			return err
		}
	}
	if opt.Before != nil {
		if err := ValidateText("before checkpoint id", opt.Before.CheckpointID); err != nil {
			return err
		}
	}
	return nil
}

// ValidatePut checks the arguments of Saver.Put; every backend calls it
// first so that bad input fails the same way everywhere.
func ValidatePut(cfg Config, cp *Checkpoint, newVersions map[string]string) error {
	if err := ValidateConfig(cfg); err != nil {
		return err
	}
	if cp == nil {
		return ErrNilCheckpoint
	}
	if cp.ID == "" {
		return fmt.Errorf("%w: empty id", ErrInvalidCheckpoint)
	}
	if err := ValidateText("checkpoint id", cp.ID); err != nil {
		return err
	}
	if err := validateVersions(cp.ChannelVersions); err != nil {
		return err
	}
	if err := validateVersions(newVersions); err != nil {
		return err
	}
	for ch := range cp.ChannelValues {
		if err := ValidateText("channel name", ch); err != nil {
			return err
		}
	}
	for node, seen := range cp.VersionsSeen {
		if err := ValidateText("node name", node); err != nil {
			return err
		}
		if err := validateVersions(seen); err != nil {
			return err
		}
	}
	return nil
}

func validateVersions(versions map[string]string) error {
	for ch, v := range versions {
		if err := ValidateText("channel name", ch); err != nil {
			return err
		}
		if err := ValidateText("channel version", v); err != nil {
			return err
		}
	}
	return nil
}

// ValidatePutWrites checks the arguments of Saver.PutWrites.
func ValidatePutWrites(cfg Config, writes []Write, taskID, taskPath string) error {
	if err := ValidateConfig(cfg); err != nil {
		return err
	}
	if cfg.CheckpointID == "" {
		return ErrMissingCheckpointID
	}
	if err := ValidateText("task id", taskID); err != nil {
		return err
	}
	if err := ValidateText("task path", taskPath); err != nil {
		return err
	}
	for _, w := range writes {
		if err := ValidateText("channel name", w.Channel); err != nil {
			return err
		}
	}
	return nil
}

// ApplyPendingSends migrates a v<4 checkpoint: the Send packets its parent
// stored as writes to ChannelTasks become the channel value ChannelTasks,
// at the greatest existing channel version (or the first version when the
// checkpoint has none), as LangGraph's savers do on load.
func ApplyPendingSends(cp *Checkpoint, sends []any, style VersionStyle) {
	if cp.ChannelValues == nil {
		cp.ChannelValues = map[string]any{}
	}
	if cp.ChannelVersions == nil {
		cp.ChannelVersions = map[string]string{}
	}
	cp.ChannelValues[ChannelTasks] = sends
	vs := make([]string, 0, len(cp.ChannelVersions))
	for _, v := range cp.ChannelVersions {
		vs = append(vs, v)
	}
	if m := MaxVersion(vs...); m != "" {
		cp.ChannelVersions[ChannelTasks] = m
	} else {
		cp.ChannelVersions[ChannelTasks] = NextVersionStyle(style, "")
	}
}
