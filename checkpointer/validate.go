package checkpointer

import "fmt"

// ValidatePut checks the arguments of Saver.Put; every backend calls it
// first so that bad input fails the same way everywhere.
func ValidatePut(cfg Config, cp *Checkpoint) error {
	if cfg.ThreadID == "" {
		return ErrMissingThreadID
	}
	if cp == nil {
		return ErrNilCheckpoint
	}
	if cp.ID == "" {
		return fmt.Errorf("%w: empty id", ErrInvalidCheckpoint)
	}
	return nil
}

// ValidatePutWrites checks the arguments of Saver.PutWrites.
func ValidatePutWrites(cfg Config) error {
	if cfg.ThreadID == "" {
		return ErrMissingThreadID
	}
	if cfg.CheckpointID == "" {
		return ErrMissingCheckpointID
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
