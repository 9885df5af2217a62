package core

import (
	"context"
	"fmt"

	"github.com/memvault/memvault/internal/binding"
	"github.com/memvault/memvault/internal/rotate"
	"github.com/memvault/memvault/internal/sqlexec"
	"github.com/memvault/memvault/reencrypt"
	"github.com/memvault/memvault/serde"
)

// ReencryptSQL is Reencrypt for the SQL drivers: the channel values of the
// blobs table and the pending writes of the writes table (as db names
// them), each value resealed under the serializer's primary key where it
// lives (binding.Blob, binding.Write), a batch at a time, with
// compare-and-swap updates so rows written meanwhile are left alone; then
// the file is compacted where it keeps old row images (rotate.Compact).
// driver prefixes errors.
func ReencryptSQL(ctx context.Context, driver string, db sqlexec.DB, s serde.Serializer, opt reencrypt.Options, blobs, writes string) (reencrypt.Stats, error) {
	codec := binding.New(s)
	if !codec.CanReencrypt() {
		return reencrypt.Stats{}, fmt.Errorf("%s: %w", driver, rotate.ErrNotEncrypted)
	}
	st, err := rotate.Run(ctx, codec, opt, blobTable(blobs, codec).Table(db), writeTable(writes, codec).Table(db))
	if err == nil {
		err = rotate.Compact(ctx, opt, db)
	}
	if err != nil {
		return st, fmt.Errorf("%s: %w", driver, err)
	}
	return st, nil
}

func blobTable(name string, codec binding.Codec) rotate.SQLTable {
	return rotate.SQLTable{
		Name: name, Label: "checkpoint_blobs",
		Keys:    []string{"thread_id", "checkpoint_ns", "channel", "version"},
		Start:   []any{"", "", "", ""},
		Columns: "thread_id, checkpoint_ns, channel, version, type, blob",
		Where:   "blob IS NOT NULL AND type <> 'empty'",
		Scan: func(scan func(...any) error) (rotate.Row, error) {
			var t, ns, ch, v, typ string
			var data []byte
			if err := scan(&t, &ns, &ch, &v, &typ, &data); err != nil {
				return rotate.Row{}, err
			}
			return codec.Row([]any{t, ns, ch, v}, binding.Blob{Thread: t, NS: ns, Channel: ch, Version: v}, typ, data), nil
		},
		Update: func(c rotate.Change) sqlexec.Stmt {
			return sqlexec.Stmt{
				SQL: `UPDATE ` + name + ` SET type = ?, blob = ?
WHERE thread_id = ? AND checkpoint_ns = ? AND channel = ? AND version = ? AND type = ? AND blob = ?`,
				Args: append(append([]any{c.NewTyp, c.NewData}, c.Key...), c.Typ, c.Data),
			}
		},
	}
}

func writeTable(name string, codec binding.Codec) rotate.SQLTable {
	return rotate.SQLTable{
		Name: name, Label: "checkpoint_writes",
		Keys: []string{"thread_id", "checkpoint_ns", "checkpoint_id", "task_id", "idx"},
		// idx is a 32-bit integer in LangGraph's schema; special channels
		// use small negative ones.
		Start:   []any{"", "", "", "", int64(-1 << 31)},
		Columns: "thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, coalesce(type, ''), blob",
		Scan: func(scan func(...any) error) (rotate.Row, error) {
			var t, ns, id, task, ch, typ string
			var idx int64
			var data []byte
			if err := scan(&t, &ns, &id, &task, &idx, &ch, &typ, &data); err != nil {
				return rotate.Row{}, err
			}
			return codec.Row([]any{t, ns, id, task, idx}, binding.Write{Thread: t, NS: ns, Checkpoint: id, Task: task, Idx: int(idx), Channel: ch}, typ, data), nil
		},
		Update: func(c rotate.Change) sqlexec.Stmt {
			return sqlexec.Stmt{
				SQL: `UPDATE ` + name + ` SET type = ?, blob = ?
WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id = ? AND task_id = ? AND idx = ? AND coalesce(type, '') = ? AND blob = ?`,
				Args: append(append([]any{c.NewTyp, c.NewData}, c.Key...), c.Typ, c.Data),
			}
		},
	}
}
