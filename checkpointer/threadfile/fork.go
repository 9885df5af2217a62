package threadfile

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/memvault/memvault/checkpointer"
)

// Fork stores a new checkpoint whose parent is the one from names, with
// the channels of updates set to new values under new versions (LangGraph's
// update_state from an earlier checkpoint: time travel). Its metadata is
// {"source": "fork", "step": parent's step + 1, "parents": {}}. A missing
// checkpoint is checkpointer.ErrNotFound.
func Fork(ctx context.Context, saver checkpointer.Saver, from checkpointer.Config, updates map[string]any) (checkpointer.Config, error) {
	t, err := saver.GetTuple(ctx, from)
	if err != nil {
		return from, err
	}
	if t == nil {
		return from, fmt.Errorf("%w: %s has no %s", checkpointer.ErrNotFound, checkpointer.NameID("thread", from.ThreadID), checkpointer.NameID("checkpoint", from.CheckpointID))
	}
	cp := *t.Checkpoint
	cp.ChannelValues = maps.Clone(cp.ChannelValues)
	cp.ChannelVersions = maps.Clone(cp.ChannelVersions)
	if cp.ChannelValues == nil {
		cp.ChannelValues = map[string]any{}
	}
	if cp.ChannelVersions == nil {
		cp.ChannelVersions = map[string]string{}
	}
	newVersions := map[string]string{}
	for ch, v := range updates {
		cp.ChannelValues[ch] = v
		nv := saver.NextVersion(cp.ChannelVersions[ch])
		cp.ChannelVersions[ch] = nv
		newVersions[ch] = nv
	}
	step := 0
	if s, ok := t.Metadata["step"].(int64); ok {
		step = int(s) + 1
	}
	cp.ID = checkpointer.NewID(step)
	cp.TS = time.Now().UTC()
	cp.UpdatedChannels = slices.Sorted(maps.Keys(newVersions))
	md := checkpointer.Metadata{"source": "fork", "step": step, "parents": map[string]any{}}
	return saver.Put(ctx, t.Config, &cp, md, newVersions)
}
