package core

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/internal/binding"
	"github.com/memvault/memvault/serde"
)

// Stored is one checkpoint as a driver read it, nothing decrypted yet: the
// checkpoint's row and the value and write rows that go with it. Drivers
// fill it from their storage; Reader.Tuple turns it into a Tuple.
type Stored struct {
	Thread, NS, ID string
	// Parent is the parent checkpoint's id, "" for none.
	Parent string
	// Checkpoint is the decoded checkpoint document (DecodeCheckpointJSON),
	// its channel values not yet attached.
	Checkpoint *DecodedCheckpoint
	// Metadata is the decoded metadata object (DecodeMetadata), owned by
	// the tuple from here on.
	Metadata map[string]any
	// Values are the blob rows of the checkpoint's channel versions; rows
	// of type serde.TypeEmpty are skipped.
	Values []Value
	// Writes are the checkpoint's pending writes in (task, idx) order.
	Writes []StoredWrite
	// Sends are the parent's ChannelTasks writes, in LangGraph's order
	// (task path, task, idx), for a checkpoint older than v4 (see
	// ApplyPendingSends); nil otherwise.
	Sends []StoredWrite
}

// Value is one stored channel value (a checkpoint_blobs row).
type Value = checkpointer.ValueRow

// StoredWrite is one stored pending write (a checkpoint_writes row).
type StoredWrite = checkpointer.WriteRow

// Reader builds tuples from stored rows: it opens every value where it was
// sealed (binding.Blob for channel values, binding.Write for pending writes
// and sends), gates the plaintext values of Python's inline channels
// through the serializer, and migrates the pending sends of v<4
// checkpoints. Every driver reads through it, so a ciphertext moved to
// another row fails the same way everywhere.
type Reader struct {
	Codec binding.Codec
	Style checkpointer.VersionStyle
}

// Tuple decodes st. Errors name the checkpoint and the failing value, never
// its contents; a value that does not open is serde.ErrDecrypt.
func (r Reader) Tuple(ctx context.Context, st *Stored) (*checkpointer.Tuple, error) {
	var aad []byte // associated data, rebuilt in place for each value
	cp := st.Checkpoint.Checkpoint
	cp.ChannelValues = make(map[string]any, len(st.Checkpoint.Inline)+len(st.Values))
	if cp.ChannelVersions == nil {
		cp.ChannelVersions = map[string]string{}
	}
	if cp.VersionsSeen == nil {
		cp.VersionsSeen = map[string]map[string]string{}
	}
	for ch, v := range st.Checkpoint.Inline {
		// Python keeps primitives inline, in plaintext (blobs override
		// them); memvault never writes them. They pass the serializer's
		// plaintext gate, so a strict encrypting serializer refuses them
		// (and a value injected into the document).
		if err := r.admitPlaintext(v); err != nil {
			return nil, fmt.Errorf("checkpoint %q: inline value of %q: %w", st.ID, ch, err)
		}
		cp.ChannelValues[ch] = v
	}
	for _, b := range st.Values {
		if b.Type == serde.TypeEmpty {
			continue
		}
		v, err := binding.OpenBuf(ctx, r.Codec, &aad, binding.Blob{Thread: st.Thread, NS: st.NS, Channel: b.Channel, Version: b.Version}, b.Type, b.Data)
		if err != nil {
			return nil, fmt.Errorf("checkpoint %q: channel %q: %w", st.ID, b.Channel, err)
		}
		cp.ChannelValues[b.Channel] = v
	}
	if len(st.Sends) > 0 && st.Parent != "" {
		sends := make([]any, len(st.Sends))
		for i, w := range st.Sends {
			v, err := binding.OpenBuf(ctx, r.Codec, &aad, binding.Write{Thread: st.Thread, NS: st.NS, Checkpoint: st.Parent, Task: w.Task, Idx: w.Idx, Channel: w.Channel}, w.Type, w.Data)
			if err != nil {
				return nil, fmt.Errorf("checkpoint %q: pending send %s/%d: %w", st.ID, w.Task, w.Idx, err)
			}
			sends[i] = v
		}
		ApplyPendingSends(cp, sends, r.Style)
	}
	md := st.Metadata
	if md == nil {
		md = map[string]any{}
	}
	t := &checkpointer.Tuple{
		Config:     checkpointer.Config{ThreadID: st.Thread, CheckpointNS: st.NS, CheckpointID: st.ID},
		Checkpoint: cp,
		Metadata:   checkpointer.Metadata(md),
	}
	if st.Parent != "" {
		t.ParentConfig = &checkpointer.Config{ThreadID: st.Thread, CheckpointNS: st.NS, CheckpointID: st.Parent}
	}
	if len(st.Writes) > 0 {
		t.PendingWrites = make([]checkpointer.PendingWrite, len(st.Writes))
		for i, w := range st.Writes {
			v, err := binding.OpenBuf(ctx, r.Codec, &aad, binding.Write{Thread: st.Thread, NS: st.NS, Checkpoint: st.ID, Task: w.Task, Idx: w.Idx, Channel: w.Channel}, w.Type, w.Data)
			if err != nil {
				return nil, fmt.Errorf("checkpoint %q: pending write %s/%d: %w", st.ID, w.Task, w.Idx, err)
			}
			t.PendingWrites[i] = checkpointer.PendingWrite{TaskID: w.Task, Channel: w.Channel, Value: v}
		}
	}
	return t, nil
}

// admitPlaintext returns the serializer's verdict on a plaintext JSON value
// (serde.ErrPlaintextRefused from a strict encrypting serializer). An
// unbound serializer reads plaintext by definition.
func (r Reader) admitPlaintext(v any) error {
	if !r.Codec.Bound() {
		return nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("%w: %v", serde.ErrMalformed, err)
	}
	_, err = r.Codec.Serializer().LoadsTyped(serde.TypeJSON, b)
	return err
}

// DecodeMetadata decodes a stored metadata document: a JSON object (or
// null, read as empty) in memvault's JSON value model.
func DecodeMetadata(b []byte) (map[string]any, error) {
	v, err := DecodeJSONValue(b)
	if err != nil {
		return nil, fmt.Errorf("%w: metadata: %v", checkpointer.ErrInvalidCheckpoint, err)
	}
	switch m := v.(type) {
	case map[string]any:
		return m, nil
	case nil:
		return map[string]any{}, nil
	default:
		return nil, fmt.Errorf("%w: metadata is not an object", checkpointer.ErrInvalidCheckpoint)
	}
}
