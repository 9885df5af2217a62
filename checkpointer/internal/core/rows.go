package core

import (
	"context"
	"fmt"
	"slices"

	"github.com/memvault/memvault/checkpointer/internal/checks"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/internal/binding"
	"github.com/memvault/memvault/serde"
)

// Blob is a checkpoint_blobs row of a Put: Data is never nil for a value,
// nil for "empty".
type Blob = checkpointer.ValueRow

// Checkpoint is what a Put stores: the checkpoint row and the blob rows of
// its new channel versions.
type Checkpoint struct {
	Thread, NS, ID string
	Parent         string // "" for none
	// NeedsParent: the checkpoint inherits values from Parent (see
	// Inherits), so the driver must refuse it, storing nothing, unless
	// Parent is stored when the put commits (ParentMissing).
	NeedsParent bool
	Doc, Meta   []byte // checkpoint document and metadata, JSON
	Blobs       []Blob // one per channel of newVersions, by channel
	// Fence holds the data keys that sealed the rows; the driver runs it
	// inside its write (binding.Fence).
	Fence binding.Fence
	// wf is Fence as the driver receives it (WriteFence), kept here so
	// that handing it over allocates nothing.
	wf fence
}

// WriteFence is the checkpointer.WriteFence of r's rows, sealed by c.
func (r *Checkpoint) WriteFence(c binding.Codec) checkpointer.WriteFence {
	r.wf = fence{c, &r.Fence}
	return &r.wf
}

// Put validates a Put and prepares its rows. A channel of newVersions
// without a value gets an "empty" row, as JS LangGraph writes. Without
// encodeDoc the document is left out (Doc nil): the driver keeps cp
// decoded.
func Put(ctx context.Context, c binding.Codec, style checkpointer.VersionStyle, cfg checkpointer.Config, cp *checkpointer.Checkpoint, md checkpointer.Metadata, newVersions map[string]string, encodeDoc bool) (*Checkpoint, error) {
	if err := checks.ValidatePut(cfg, cp, newVersions); err != nil {
		return nil, err
	}
	// A subject named by the metadata is bound before anything is sealed.
	if err := c.BindThread(ctx, cfg.ThreadID, md); err != nil {
		return nil, err
	}
	var doc []byte
	if encodeDoc {
		var err error
		if doc, err = EncodeCheckpointJSON(cp, style); err != nil {
			return nil, fmt.Errorf("checkpoint: %w", err)
		}
	}
	meta, err := EncodeMetadata(cfg, md)
	if err != nil {
		return nil, err
	}
	out := &Checkpoint{Thread: cfg.ThreadID, NS: cfg.CheckpointNS, ID: cp.ID, Parent: cfg.CheckpointID, Doc: doc, Meta: meta,
		NeedsParent: NeedsParent(cfg, cp, newVersions), Blobs: make([]Blob, 0, len(newVersions))}
	// The rows go in channel order (two writers lock them in one
	// order); a graph's few channels sort on the stack.
	var buf [16]string
	channels := buf[:0]
	for ch := range newVersions {
		channels = append(channels, ch)
	}
	slices.Sort(channels)
	for _, ch := range channels {
		b, err := SealBlob(ctx, c, cfg.ThreadID, cfg.CheckpointNS, ch, newVersions[ch], cp.ChannelValues, &out.Fence)
		if err != nil {
			return nil, err
		}
		out.Blobs = append(out.Blobs, b)
	}
	// The checkpoint row names the thread's subject in its metadata even
	// when no value was sealed.
	if err := c.FenceThread(ctx, cfg.ThreadID, &out.Fence); err != nil {
		return nil, err
	}
	return out, nil
}

// Inherits reports whether cp reads a value it does not write: a channel
// of its ChannelVersions whose version newVersions does not give. Such a
// value is the one stored for its parent (LangGraph copies the parent's
// versions), so the put is only whole while the parent is stored.
func Inherits(cp *checkpointer.Checkpoint, newVersions map[string]string) bool {
	for ch, v := range cp.ChannelVersions {
		if newVersions[ch] != v {
			return true
		}
	}
	return false
}

// NeedsParent reports whether a put of cp continuing cfg's checkpoint is
// whole only while that parent is stored: it inherits a value from it
// (Inherits) or reads its pending sends from it (ReadsParentSends). Every
// driver refuses such a put, storing nothing, when the parent is gone
// (ParentMissing).
func NeedsParent(cfg checkpointer.Config, cp *checkpointer.Checkpoint, newVersions map[string]string) bool {
	return cfg.CheckpointID != "" && (ReadsParentSends(cp) || Inherits(cp, newVersions))
}

// ReadsParentSends reports whether cp is of a format before 4 (a V of 1
// to 3; 0 is a Go caller's unset field, taken as current), whose pending
// sends are not in the checkpoint but read from its parent's writes to
// the tasks channel: such a checkpoint needs its parent even when it
// rewrites every channel.
func ReadsParentSends(cp *checkpointer.Checkpoint) bool {
	return cp.V > 0 && cp.V < 4
}

// ParentMissing is the error of a put that needs its parent (Inherits)
// when the parent is not stored: it wraps checkpointer.ErrParentMissing
// and names the checkpoint.
func ParentMissing(thread, ns, parent string) error {
	return (&checkpointer.PutRows{Thread: thread, NS: ns, Parent: parent}).ErrParentMissing()
}

// SealBlob is the blob row of channel ch at version ver, from values; the
// sealing key goes into f.
func SealBlob(ctx context.Context, c binding.Codec, thread, ns, ch, ver string, values map[string]any, f *binding.Fence) (Blob, error) {
	b := Blob{Channel: ch, Version: ver, Type: serde.TypeEmpty}
	v, ok := values[ch]
	if !ok {
		return b, nil
	}
	typ, data, err := binding.SealAt(ctx, c, binding.Blob{Thread: thread, NS: ns, Channel: ch, Version: ver}, v, f)
	if err != nil {
		return b, fmt.Errorf("channel %q: %w", ch, err)
	}
	if data == nil {
		data = []byte{} // blob columns hold b"" for a value, NULL only for "empty"
	}
	b.Type, b.Data = typ, data
	return b, nil
}

// Write is a checkpoint_writes row: Data is never nil (the column is NOT
// NULL; LangGraph stores b"").
type Write = checkpointer.WriteRow

// Writes is what a PutWrites stores.
type Writes struct {
	Thread, NS, Checkpoint, Task, TaskPath string
	// Rows holds one row per index, in index order (two calls writing the
	// same rows in opposite orders would otherwise each hold a lock the
	// other waits for).
	Rows []Write
	// Upsert: the rows replace stored ones (every write is to a special
	// channel); otherwise stored rows are kept, so a retried task is
	// idempotent, as in LangGraph.
	Upsert bool
	// Fence holds the data keys that sealed the rows (binding.Fence).
	Fence binding.Fence
	// wf is Fence as the driver receives it (WriteFence), kept here so
	// that handing it over allocates nothing.
	wf fence
}

// WriteFence is the checkpointer.WriteFence of w's rows, sealed by c.
func (w *Writes) WriteFence(c binding.Codec) checkpointer.WriteFence {
	w.wf = fence{c, &w.Fence}
	return &w.wf
}

// PutWrites validates a PutWrites and prepares its rows; it returns nil for
// no writes. Of several writes at one index (special channels) an upsert
// keeps the last, an insert the first, as LangGraph's row-by-row
// statements do.
func PutWrites(ctx context.Context, c binding.Codec, cfg checkpointer.Config, writes []checkpointer.Write, taskID, taskPath string) (*Writes, error) {
	if err := checks.ValidatePutWrites(cfg, writes, taskID, taskPath); err != nil {
		return nil, err
	}
	if len(writes) == 0 {
		return nil, nil
	}
	out := &Writes{Thread: cfg.ThreadID, NS: cfg.CheckpointNS, Checkpoint: cfg.CheckpointID, Task: taskID, TaskPath: taskPath,
		Upsert: UpsertWrites(writes), Rows: make([]Write, 0, len(writes))}
	pos := make(map[int]int, len(writes))
	for i, w := range writes {
		idx := WriteIndex(w.Channel, i)
		typ, data, err := binding.SealAt(ctx, c, binding.Write{Thread: cfg.ThreadID, NS: cfg.CheckpointNS, Checkpoint: cfg.CheckpointID, Task: taskID, Idx: idx, Channel: w.Channel}, w.Value, &out.Fence)
		if err != nil {
			return nil, fmt.Errorf("write %d (channel %q): %w", i, w.Channel, err)
		}
		if data == nil {
			data = []byte{}
		}
		row := Write{Idx: idx, Channel: w.Channel, Type: typ, Data: data}
		if j, dup := pos[idx]; dup {
			if out.Upsert {
				out.Rows[j] = row
			}
			continue
		}
		pos[idx] = len(out.Rows)
		out.Rows = append(out.Rows, row)
	}
	slices.SortFunc(out.Rows, func(a, b Write) int { return a.Idx - b.Idx })
	return out, nil
}
