package sqlite

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/checkpointer/internal/core"
	"github.com/memvault/memvault/internal/binding"
)

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
	var (
		execs []importExec
		fence binding.Fence
	)
	for _, it := range items {
		thread, ns := it.ThreadID, it.CheckpointNS
		if cp := it.Checkpoint; cp != nil {
			cfg := checkpointer.Config{ThreadID: thread, CheckpointNS: ns, CheckpointID: it.ParentID}
			// Integer versions stay integers (see checkpointer.ThreadImporter).
			r, err := core.Put(ctx, s.codec, checkpointer.VersionInt, cfg, cp, it.Metadata, it.NewVersions)
			if err != nil {
				return fmt.Errorf("sqlite: %w", err)
			}
			fence.Merge(&r.Fence)
			for _, b := range r.Blobs {
				execs = append(execs, importExec{s.st.putBlob, []any{thread, ns, b.Channel, b.Version, b.Type, b.Data}})
			}
			var parent any
			if r.Parent != "" {
				parent = r.Parent
			}
			execs = append(execs, importExec{s.st.putCheckpoint, []any{thread, ns, r.ID, parent, r.Doc, r.Meta}})
		}
		cfg := checkpointer.Config{ThreadID: thread, CheckpointNS: ns, CheckpointID: it.ID}
		for _, w := range it.Writes {
			ws, err := core.PutWrites(ctx, s.codec, cfg, w.Writes, w.TaskID, "")
			if err != nil {
				return fmt.Errorf("sqlite: %w", err)
			}
			if ws == nil {
				continue
			}
			fence.Merge(&ws.Fence)
			stmt := s.st.insertWrite
			if ws.Upsert {
				stmt = s.st.upsertWrite
			}
			for _, r := range ws.Rows {
				execs = append(execs, importExec{stmt, []any{thread, ns, it.ID, w.TaskID, "", r.Idx, r.Channel, r.Type, r.Data}})
			}
		}
	}
	err := s.db.Write(ctx, func(tx *sql.Tx) error {
		if err := s.codec.Check(ctx, &fence); err != nil {
			return err
		}
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
