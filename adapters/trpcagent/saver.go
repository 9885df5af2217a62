package trpcagent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"sort"
	"time"

	"trpc.group/trpc-go/trpc-agent-go/graph"

	"github.com/memvault/memvault/checkpointer"
)

// channel is the memvault channel holding tRPC's checkpoint.
const channel = "trpc"

// extraChannel is the memvault channel holding the entries of tRPC's
// metadata Extra that carry graph state (sealedExtra), sealed like the
// checkpoint; a checkpoint has it only when it has such entries.
const extraChannel = "trpc:extra"

// sealedExtra are the keys of tRPC's metadata Extra that the adapter keeps
// out of memvault's plaintext metadata: tRPC puts graph state there. A run
// paused through graph.WithGraphInterrupt saves, under
// graph_interrupt_inputs, the input state of each node it will run next;
// as metadata it stood in the clear in the database. These entries cannot
// be filtered on (List); every other Extra entry (ids, keys, a caller's
// own) stays plaintext and filterable.
var sealedExtra = []string{graph.CheckpointMetaKeyGraphInterruptInputs}

// CheckpointSaver is a tRPC-Agent-Go graph.CheckpointSaver on a memvault
// saver. It is safe for concurrent use as far as the saver is.
type CheckpointSaver struct {
	saver checkpointer.Saver
	imp   checkpointer.ThreadImporter
}

var _ graph.CheckpointSaver = (*CheckpointSaver)(nil)

// New returns the checkpoint saver of saver, which must be a
// checkpointer.ThreadImporter (every memvault saver is) so that PutFull is
// atomic.
func New(saver checkpointer.Saver) (*CheckpointSaver, error) {
	imp, ok := saver.(checkpointer.ThreadImporter)
	if !ok {
		return nil, fmt.Errorf("trpcagent: saver %T cannot write a checkpoint with its writes atomically", saver)
	}
	return &CheckpointSaver{saver: saver, imp: imp}, nil
}

func config(c map[string]any) checkpointer.Config {
	return checkpointer.Config{ThreadID: graph.GetLineageID(c), CheckpointNS: graph.GetNamespace(c), CheckpointID: graph.GetCheckpointID(c)}
}

// Get implements graph.CheckpointSaver.
func (s *CheckpointSaver) Get(ctx context.Context, c map[string]any) (*graph.Checkpoint, error) {
	t, err := s.GetTuple(ctx, c)
	if err != nil || t == nil {
		return nil, err
	}
	return t.Checkpoint, nil
}

// GetTuple implements graph.CheckpointSaver: the checkpoint the config
// names, or the latest of its lineage and namespace; nil when there is none.
func (s *CheckpointSaver) GetTuple(ctx context.Context, c map[string]any) (*graph.CheckpointTuple, error) {
	cfg := config(c)
	if cfg.ThreadID == "" {
		return nil, errors.New("trpcagent: lineage_id is required")
	}
	if cfg.CheckpointID != "" {
		id, err := s.resolve(ctx, cfg)
		if err != nil || id == "" {
			return nil, err
		}
		cfg.CheckpointID = id
	}
	t, err := s.saver.GetTuple(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("trpcagent: get: %w", err)
	}
	if t == nil {
		return nil, nil
	}
	return tuple(t)
}

// idKey is the metadata key holding a checkpoint's tRPC id.
const idKey = "trpc_id"

// resolve returns the memvault id of the checkpoint whose tRPC id is
// cfg.CheckpointID ("" when there is none). tRPC's ids are random UUIDs,
// and memvault's must sort by time (the latest checkpoint is the greatest
// id), so memvault ids are its own, time-ordered, and the tRPC id is
// metadata, found with one filtered query over the lineage.
func (s *CheckpointSaver) resolve(ctx context.Context, cfg checkpointer.Config) (string, error) {
	want := cfg.CheckpointID
	cfg.CheckpointID = ""
	for t, err := range s.saver.List(ctx, &cfg, checkpointer.ListOptions{Filter: map[string]any{idKey: want}, Limit: 1}) {
		if err != nil {
			return "", fmt.Errorf("trpcagent: find %s: %w", checkpointer.NameID("checkpoint", want), err)
		}
		return t.Config.CheckpointID, nil
	}
	return "", nil
}

// tuple converts a memvault tuple back into tRPC's.
func tuple(t *checkpointer.Tuple) (*graph.CheckpointTuple, error) {
	raw, ok := t.Checkpoint.ChannelValues[channel].([]byte)
	if !ok {
		return nil, fmt.Errorf("trpcagent: checkpoint %s holds no tRPC checkpoint", t.Config.CheckpointID)
	}
	var cp graph.Checkpoint
	if err := json.Unmarshal(raw, &cp); err != nil {
		return nil, fmt.Errorf("trpcagent: malformed checkpoint %s: %w", t.Config.CheckpointID, err)
	}
	md, err := metadataFrom(t.Metadata)
	if err != nil {
		return nil, err
	}
	if v, ok := t.Checkpoint.ChannelValues[extraChannel]; ok {
		raw, ok := v.([]byte)
		var sealed map[string]any
		if !ok || json.Unmarshal(raw, &sealed) != nil {
			return nil, fmt.Errorf("trpcagent: checkpoint %s: malformed sealed metadata", t.Config.CheckpointID)
		}
		if md.Extra == nil {
			md.Extra = map[string]any{}
		}
		maps.Copy(md.Extra, sealed)
	}
	out := &graph.CheckpointTuple{
		Config:     graph.CreateCheckpointConfig(t.Config.ThreadID, cp.ID, t.Config.CheckpointNS),
		Checkpoint: &cp,
		Metadata:   md,
	}
	if cp.ParentCheckpointID != "" {
		out.ParentConfig = graph.CreateCheckpointConfig(t.Config.ThreadID, cp.ParentCheckpointID, t.Config.CheckpointNS)
	}
	for _, w := range t.PendingWrites {
		b, ok := w.Value.([]byte)
		if !ok {
			return nil, fmt.Errorf("trpcagent: checkpoint %s: malformed pending write", t.Config.CheckpointID)
		}
		var pw graph.PendingWrite
		if err := json.Unmarshal(b, &pw); err != nil {
			return nil, fmt.Errorf("trpcagent: checkpoint %s: malformed pending write: %w", t.Config.CheckpointID, err)
		}
		out.PendingWrites = append(out.PendingWrites, pw)
	}
	sort.SliceStable(out.PendingWrites, func(i, j int) bool { return out.PendingWrites[i].Sequence < out.PendingWrites[j].Sequence })
	return out, nil
}

// metadataOf is tRPC's metadata as memvault's (plaintext, filterable).
func metadataOf(md *graph.CheckpointMetadata) (checkpointer.Metadata, error) {
	if md == nil {
		md = &graph.CheckpointMetadata{Source: graph.CheckpointSourceUpdate}
	}
	b, err := json.Marshal(md)
	if err != nil {
		return nil, fmt.Errorf("trpcagent: encode metadata: %w", err)
	}
	var m checkpointer.Metadata
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("trpcagent: encode metadata: %w", err)
	}
	return m, nil
}

func metadataFrom(m checkpointer.Metadata) (*graph.CheckpointMetadata, error) {
	m = maps.Clone(m)
	delete(m, idKey)
	b, err := json.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("trpcagent: decode metadata: %w", err)
	}
	var md graph.CheckpointMetadata
	if err := json.Unmarshal(b, &md); err != nil {
		return nil, fmt.Errorf("trpcagent: decode metadata: %w", err)
	}
	return &md, nil
}

// List implements graph.CheckpointSaver: the lineage's checkpoints in the
// config's namespace, newest first, before the filter's checkpoint, with
// metadata containing the filter's, at most its limit.
func (s *CheckpointSaver) List(ctx context.Context, c map[string]any, filter *graph.CheckpointFilter) ([]*graph.CheckpointTuple, error) {
	cfg := config(c)
	if cfg.ThreadID == "" {
		return nil, errors.New("trpcagent: lineage_id is required")
	}
	cfg.CheckpointID = ""
	var opt checkpointer.ListOptions
	if filter != nil {
		opt.Limit = filter.Limit
		if len(filter.Metadata) > 0 {
			// tRPC filters on the metadata's Extra fields.
			opt.Filter = map[string]any{"extra": filter.Metadata}
		}
		if id := graph.GetCheckpointID(filter.Before); id != "" {
			before := cfg
			before.CheckpointID = id
			mv, err := s.resolve(ctx, before)
			if err != nil {
				return nil, err
			}
			if mv == "" {
				return nil, nil
			}
			before.CheckpointID = mv
			opt.Before = &before
		}
	}
	var out []*graph.CheckpointTuple
	for t, err := range s.saver.List(ctx, &cfg, opt) {
		if err != nil {
			return nil, fmt.Errorf("trpcagent: list: %w", err)
		}
		tt, err := tuple(t)
		if err != nil {
			return nil, err
		}
		out = append(out, tt)
	}
	return out, nil
}

// item is a tRPC checkpoint as a memvault import item (checkpoint and
// writes).
func (s *CheckpointSaver) item(ctx context.Context, c map[string]any, cp *graph.Checkpoint, md *graph.CheckpointMetadata, writes []graph.PendingWrite) (checkpointer.ImportCheckpoint, error) {
	if cp == nil {
		return checkpointer.ImportCheckpoint{}, errors.New("trpcagent: checkpoint cannot be nil")
	}
	cfg := config(c)
	if cfg.ThreadID == "" {
		return checkpointer.ImportCheckpoint{}, errors.New("trpcagent: lineage_id is required")
	}
	raw, err := json.Marshal(cp)
	if err != nil {
		return checkpointer.ImportCheckpoint{}, fmt.Errorf("trpcagent: encode checkpoint: %w", err)
	}
	m, err := metadataOf(md)
	if err != nil {
		return checkpointer.ImportCheckpoint{}, err
	}
	m[idKey] = cp.ID
	sealed, err := sealExtra(m, md)
	if err != nil {
		return checkpointer.ImportCheckpoint{}, err
	}
	parent := ""
	if cp.ParentCheckpointID != "" {
		pc := cfg
		pc.CheckpointID = cp.ParentCheckpointID
		if parent, err = s.resolve(ctx, pc); err != nil {
			return checkpointer.ImportCheckpoint{}, err
		}
	}
	step := 0
	if md != nil {
		step = md.Step
	}
	id := checkpointer.NewID(step)
	ts := cp.Timestamp
	if ts.IsZero() {
		ts = time.Now().UTC()
	}
	// The channel's version is the checkpoint's id: each checkpoint's blob
	// is its own.
	versions := map[string]string{channel: id}
	values := map[string]any{channel: raw}
	if sealed != nil {
		versions[extraChannel] = id
		values[extraChannel] = sealed
	}
	it := checkpointer.ImportCheckpoint{
		ThreadID: cfg.ThreadID, CheckpointNS: cfg.CheckpointNS, ID: id, ParentID: parent,
		Checkpoint: &checkpointer.Checkpoint{
			V: 4, ID: id, TS: ts,
			ChannelValues:   values,
			ChannelVersions: versions,
		},
		Metadata:    m,
		NewVersions: versions,
	}
	byTask := map[string]int{}
	for _, w := range writes {
		ws, err := write(w)
		if err != nil {
			return checkpointer.ImportCheckpoint{}, err
		}
		i, ok := byTask[w.TaskID]
		if !ok {
			i = len(it.Writes)
			byTask[w.TaskID] = i
			it.Writes = append(it.Writes, checkpointer.ImportWrites{TaskID: w.TaskID})
		}
		it.Writes[i].Writes = append(it.Writes[i].Writes, ws)
	}
	return it, nil
}

// sealExtra takes md's sealedExtra entries out of m, its plaintext form
// (metadataOf), and returns them as the JSON the extra channel seals; nil
// when md has none.
func sealExtra(m checkpointer.Metadata, md *graph.CheckpointMetadata) ([]byte, error) {
	if md == nil {
		return nil, nil
	}
	var sealed map[string]any
	for _, k := range sealedExtra {
		if v, ok := md.Extra[k]; ok {
			if sealed == nil {
				sealed = map[string]any{}
			}
			sealed[k] = v
		}
	}
	if sealed == nil {
		return nil, nil
	}
	if extra, ok := m["extra"].(map[string]any); ok {
		for k := range sealed {
			delete(extra, k)
		}
		if len(extra) == 0 {
			delete(m, "extra")
		}
	}
	b, err := json.Marshal(sealed)
	if err != nil {
		return nil, fmt.Errorf("trpcagent: encode metadata: %w", err)
	}
	return b, nil
}

// write is a tRPC pending write as a memvault write: its channel, and the
// whole write (sequence included) as the sealed value.
func write(w graph.PendingWrite) (checkpointer.Write, error) {
	b, err := json.Marshal(w)
	if err != nil {
		return checkpointer.Write{}, fmt.Errorf("trpcagent: encode write: %w", err)
	}
	return checkpointer.Write{Channel: w.Channel, Value: b}, nil
}

// Put implements graph.CheckpointSaver: the checkpoint is stored under its
// own id, child of its ParentCheckpointID.
func (s *CheckpointSaver) Put(ctx context.Context, req graph.PutRequest) (map[string]any, error) {
	it, err := s.item(ctx, req.Config, req.Checkpoint, req.Metadata, nil)
	if err != nil {
		return nil, err
	}
	parent := checkpointer.Config{ThreadID: it.ThreadID, CheckpointNS: it.CheckpointNS, CheckpointID: it.ParentID}
	if _, err := s.saver.Put(ctx, parent, it.Checkpoint, it.Metadata, it.NewVersions); err != nil {
		return nil, fmt.Errorf("trpcagent: put: %w", err)
	}
	return graph.CreateCheckpointConfig(it.ThreadID, req.Checkpoint.ID, it.CheckpointNS), nil
}

// PutWrites implements graph.CheckpointSaver.
func (s *CheckpointSaver) PutWrites(ctx context.Context, req graph.PutWritesRequest) error {
	cfg := config(req.Config)
	if cfg.ThreadID == "" || cfg.CheckpointID == "" {
		return errors.New("trpcagent: lineage_id and checkpoint_id are required")
	}
	id, err := s.resolve(ctx, cfg)
	if err != nil {
		return err
	}
	if id == "" {
		return fmt.Errorf("trpcagent: put writes: no %s", checkpointer.NameID("checkpoint", cfg.CheckpointID))
	}
	cfg.CheckpointID = id
	ws := make([]checkpointer.Write, len(req.Writes))
	for i, w := range req.Writes {
		if w.TaskID == "" {
			w.TaskID = req.TaskID
		}
		if ws[i], err = write(w); err != nil {
			return err
		}
	}
	if err := s.saver.PutWrites(ctx, cfg, ws, req.TaskID, req.TaskPath); err != nil {
		return fmt.Errorf("trpcagent: put writes: %w", err)
	}
	return nil
}

// PutFull implements graph.CheckpointSaver: the checkpoint and its pending
// writes are stored in one unit (all or nothing).
func (s *CheckpointSaver) PutFull(ctx context.Context, req graph.PutFullRequest) (map[string]any, error) {
	it, err := s.item(ctx, req.Config, req.Checkpoint, req.Metadata, req.PendingWrites)
	if err != nil {
		return nil, err
	}
	if err := s.imp.ImportThread(ctx, []checkpointer.ImportCheckpoint{it}); err != nil {
		return nil, fmt.Errorf("trpcagent: put full: %w", err)
	}
	return graph.CreateCheckpointConfig(it.ThreadID, req.Checkpoint.ID, it.CheckpointNS), nil
}

// DeleteLineage implements graph.CheckpointSaver: the thread goes.
func (s *CheckpointSaver) DeleteLineage(ctx context.Context, lineageID string) error {
	if err := s.saver.DeleteThread(ctx, lineageID); err != nil {
		return fmt.Errorf("trpcagent: delete lineage: %w", err)
	}
	return nil
}

// Close implements graph.CheckpointSaver; the memvault saver is the
// caller's to close.
func (s *CheckpointSaver) Close() error { return nil }
