package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"slices"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/internal/binding"
	"github.com/memvault/memvault/serde"
)

var _ checkpointer.ThreadImporter = (*Saver)(nil)

// importExec is one statement of an import, prepared (serialized and
// encrypted) before the write transaction starts.
type importExec struct {
	stmt *sql.Stmt
	args []any
}

// ImportThread implements checkpointer.ThreadImporter: every row of items
// is serialized first, then all are written in one write transaction, so
// either the whole thread is stored or none of it. The rows are the ones
// Put and PutWrites write.
func (s *Saver) ImportThread(ctx context.Context, items []checkpointer.ImportCheckpoint) error {
	var execs []importExec
	for _, it := range items {
		thread, ns := it.ThreadID, it.CheckpointNS
		if cp := it.Checkpoint; cp != nil {
			cfg := checkpointer.Config{ThreadID: thread, CheckpointNS: ns, CheckpointID: it.ParentID}
			if err := checkpointer.ValidatePut(cfg, cp, it.NewVersions); err != nil {
				return fmt.Errorf("sqlite: %w", err)
			}
			// Integer versions stay integers (see checkpointer.ThreadImporter).
			doc, err := checkpointer.EncodeCheckpointJSON(cp, checkpointer.VersionInt)
			if err != nil {
				return fmt.Errorf("sqlite: checkpoint: %w", err)
			}
			meta, err := checkpointer.EncodeMetadata(cfg, it.Metadata)
			if err != nil {
				return fmt.Errorf("sqlite: %w", err)
			}
			channels := make([]string, 0, len(it.NewVersions))
			for ch := range it.NewVersions {
				channels = append(channels, ch)
			}
			slices.Sort(channels)
			for _, ch := range channels {
				ver := it.NewVersions[ch]
				typ, data := serde.TypeEmpty, []byte(nil)
				if v, ok := cp.ChannelValues[ch]; ok {
					typ, data, err = s.codec.Seal(binding.Blob{Thread: thread, NS: ns, Channel: ch, Version: ver}, v)
					if err != nil {
						return fmt.Errorf("sqlite: channel %q: %w", ch, err)
					}
				}
				execs = append(execs, importExec{s.st.putBlob, []any{thread, ns, ch, ver, typ, data}})
			}
			var parent any
			if it.ParentID != "" {
				parent = it.ParentID
			}
			execs = append(execs, importExec{s.st.putCheckpoint, []any{thread, ns, cp.ID, parent, doc, meta}})
		}
		cfg := checkpointer.Config{ThreadID: thread, CheckpointNS: ns, CheckpointID: it.ID}
		for _, w := range it.Writes {
			if err := checkpointer.ValidatePutWrites(cfg, w.Writes, w.TaskID, ""); err != nil {
				return fmt.Errorf("sqlite: %w", err)
			}
			stmt := s.st.insertWrite
			if checkpointer.UpsertWrites(w.Writes) {
				stmt = s.st.upsertWrite
			}
			for i, wr := range w.Writes {
				idx := checkpointer.WriteIndex(wr.Channel, i)
				typ, data, err := s.codec.Seal(binding.Write{Thread: thread, NS: ns, Checkpoint: it.ID, Task: w.TaskID, Idx: idx, Channel: wr.Channel}, wr.Value)
				if err != nil {
					return fmt.Errorf("sqlite: write %d (channel %q): %w", i, wr.Channel, err)
				}
				if data == nil {
					data = []byte{} // blob is NOT NULL; LangGraph stores b"" for None
				}
				execs = append(execs, importExec{stmt, []any{thread, ns, it.ID, w.TaskID, "", idx, wr.Channel, typ, data}})
			}
		}
	}
	err := s.db.Write(ctx, func(tx *sql.Tx) error {
		for _, e := range execs {
			if _, err := tx.StmtContext(ctx, e.stmt).ExecContext(ctx, e.args...); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("sqlite: import: %w", err)
	}
	return nil
}
