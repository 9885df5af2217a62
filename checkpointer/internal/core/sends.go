package core

import (
	"github.com/memvault/memvault/checkpointer"
)

// ApplyPendingSends migrates a v<4 checkpoint: the Send packets its parent
// stored as writes to ChannelTasks become the channel value ChannelTasks,
// at the greatest existing channel version (or the first version when the
// checkpoint has none), as LangGraph's savers do on load.
func ApplyPendingSends(cp *checkpointer.Checkpoint, sends []any, style checkpointer.VersionStyle) {
	if cp.ChannelValues == nil {
		cp.ChannelValues = map[string]any{}
	}
	if cp.ChannelVersions == nil {
		cp.ChannelVersions = map[string]string{}
	}
	cp.ChannelValues[checkpointer.ChannelTasks] = sends
	vs := make([]string, 0, len(cp.ChannelVersions))
	for _, v := range cp.ChannelVersions {
		vs = append(vs, v)
	}
	if m := MaxVersion(vs...); m != "" {
		cp.ChannelVersions[checkpointer.ChannelTasks] = m
	} else {
		cp.ChannelVersions[checkpointer.ChannelTasks] = NextVersionStyle(style, "")
	}
}
