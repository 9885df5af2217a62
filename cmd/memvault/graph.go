package main

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/memvault/memvault/checkpointer"
)

// miniGraph drives a checkpointer the way a LangGraph run does, without a
// graph engine: every step loads the latest checkpoint, applies the writes
// of the tasks that ran, bumps the versions of the channels they wrote and
// stores the next checkpoint. It is what the demo uses to play a
// conversation; real graphs come from a graph runtime.
type miniGraph struct {
	saver checkpointer.Saver
	runID string
}

// appendChannels are channels whose writes append (like a messages reducer)
// instead of replacing the value.
var appendChannels = map[string]bool{"messages": true}

// step stores the checkpoint produced by applying writes on top of the
// checkpoint cfg names (the latest of the thread when cfg has no id).
func (g *miniGraph) step(ctx context.Context, cfg checkpointer.Config, source, node string, writes []checkpointer.Write) (checkpointer.Config, *checkpointer.Checkpoint, error) {
	prev, err := g.saver.GetTuple(ctx, cfg)
	if err != nil {
		return cfg, nil, err
	}
	stepNo := -1
	cp := &checkpointer.Checkpoint{
		V:               4,
		ChannelValues:   map[string]any{},
		ChannelVersions: map[string]string{},
		VersionsSeen:    map[string]map[string]string{},
	}
	if prev != nil {
		cfg = prev.Config
		maps.Copy(cp.ChannelValues, prev.Checkpoint.ChannelValues)
		maps.Copy(cp.ChannelVersions, prev.Checkpoint.ChannelVersions)
		for n, seen := range prev.Checkpoint.VersionsSeen {
			cp.VersionsSeen[n] = maps.Clone(seen)
		}
		if s, ok := asInt(prev.Metadata["step"]); ok {
			stepNo = s + 1
		}
	}
	newVersions := map[string]string{}
	for _, w := range writes {
		if appendChannels[w.Channel] {
			list, _ := cp.ChannelValues[w.Channel].([]any)
			cp.ChannelValues[w.Channel] = append(slices.Clone(list), w.Value)
		} else {
			cp.ChannelValues[w.Channel] = w.Value
		}
		v := g.saver.NextVersion(cp.ChannelVersions[w.Channel])
		cp.ChannelVersions[w.Channel] = v
		newVersions[w.Channel] = v
	}
	if node != "" {
		cp.VersionsSeen[node] = maps.Clone(cp.ChannelVersions)
	}
	cp.UpdatedChannels = slices.Sorted(maps.Keys(newVersions))
	cp.ID = checkpointer.NewID(stepNo)
	cp.TS = time.Now().UTC()
	md := checkpointer.Metadata{"source": source, "step": stepNo, "parents": map[string]any{}, "run_id": g.runID}
	if node != "" {
		md["node"] = node
	}
	next, err := g.saver.Put(ctx, cfg, cp, md, newVersions)
	if err != nil {
		return cfg, nil, fmt.Errorf("put step %d: %w", stepNo, err)
	}
	return next, cp, nil
}

func asInt(v any) (int, bool) {
	switch x := v.(type) {
	case int:
		return x, true
	case int64:
		return int(x), true
	case float64:
		return int(x), true
	}
	return 0, false
}
