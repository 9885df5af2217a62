package postgres

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/jackc/pgx/v5"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/internal/binding"
	"github.com/memvault/memvault/internal/pgretry"
	"github.com/memvault/memvault/serde"
)

// Put implements checkpointer.Saver. The blob rows of every channel in
// newVersions and the checkpoint row go to PostgreSQL as one pipelined batch:
// one round trip, and one implicit transaction (PostgreSQL commits a
// pipeline at its single Sync), so a checkpoint is never visible without its
// values. Every value becomes a blob row, never inline in the checkpoint
// document; a channel in newVersions without a value gets an "empty" row.
func (s *Saver) Put(ctx context.Context, cfg checkpointer.Config, cp *checkpointer.Checkpoint, md checkpointer.Metadata, newVersions map[string]string) (checkpointer.Config, error) {
	return s.put(ctx, s.db, cfg, cp, md, newVersions)
}

// PutTx is Put inside the caller's transaction: the checkpoint commits or
// rolls back with the caller's own rows.
func (s *Saver) PutTx(ctx context.Context, tx pgx.Tx, cfg checkpointer.Config, cp *checkpointer.Checkpoint, md checkpointer.Metadata, newVersions map[string]string) (checkpointer.Config, error) {
	if tx == nil {
		return checkpointer.Config{}, fmt.Errorf("postgres: put: nil transaction")
	}
	return s.put(ctx, tx, cfg, cp, md, newVersions)
}

func (s *Saver) put(ctx context.Context, db DB, cfg checkpointer.Config, cp *checkpointer.Checkpoint, md checkpointer.Metadata, newVersions map[string]string) (checkpointer.Config, error) {
	if err := checkpointer.ValidatePut(cfg, cp, newVersions); err != nil {
		return checkpointer.Config{}, fmt.Errorf("postgres: put: %w", err)
	}
	b, err := s.putBatch(cfg, cp, md, newVersions)
	if err != nil {
		return checkpointer.Config{}, fmt.Errorf("postgres: put: %w", err)
	}
	if err := s.retryOwned(ctx, db, func() error { return runBatch(ctx, db, b) }); err != nil {
		return checkpointer.Config{}, fmt.Errorf("postgres: put: %w", err)
	}
	return checkpointer.Config{ThreadID: cfg.ThreadID, CheckpointNS: cfg.CheckpointNS, CheckpointID: cp.ID}, nil
}

func (s *Saver) putBatch(cfg checkpointer.Config, cp *checkpointer.Checkpoint, md checkpointer.Metadata, newVersions map[string]string) (*pgx.Batch, error) {
	doc, err := checkpointer.EncodeCheckpointJSON(cp, s.style)
	if err != nil {
		return nil, err
	}
	meta, err := checkpointer.EncodeMetadata(cfg, md)
	if err != nil {
		return nil, err
	}

	b := &pgx.Batch{}
	var parent *string
	if cfg.CheckpointID != "" {
		parent = &cfg.CheckpointID
	}
	if err := s.queueBlobs(b, cfg, cp, newVersions, parent); err != nil {
		return nil, err
	}
	b.Queue(s.q.upsertCkpt, cfg.ThreadID, cfg.CheckpointNS, cp.ID, parent, json.RawMessage(doc), json.RawMessage(meta))
	return b, nil
}

// queueBlobs queues the blob rows of a Put: one for every channel in
// newVersions (its serialized value, or an "empty" row when it has none).
//
// Python LangGraph keeps primitive values inline in the checkpoint
// document, without blob rows. When a Put continues a checkpoint Python
// wrote, its unchanged primitive channels would lose their value; so they
// are sent too, flagged inline, and the statement inserts them only when the
// parent's document holds them inline at the same version (never when
// memvault or JS wrote the parent).
func (s *Saver) queueBlobs(b *pgx.Batch, cfg checkpointer.Config, cp *checkpointer.Checkpoint, newVersions map[string]string, parent *string) error {
	chans := make([]string, 0, len(newVersions)+len(cp.ChannelValues))
	for ch := range newVersions {
		chans = append(chans, ch)
	}
	if parent != nil {
		for ch, val := range cp.ChannelValues {
			if _, isNew := newVersions[ch]; !isNew && cp.ChannelVersions[ch] != "" && primitive(val) {
				chans = append(chans, ch)
			}
		}
	}
	n := len(chans)
	if n == 0 {
		return nil
	}
	slices.Sort(chans) // concurrent Puts to a thread lock rows in one order
	vers := make([]string, n)
	types := make([]string, n)
	blobs := make([][]byte, n)
	inline := make([]bool, n)
	for i, ch := range chans {
		v, isNew := newVersions[ch]
		if !isNew {
			v, inline[i] = cp.ChannelVersions[ch], true
		}
		vers[i] = v
		val, ok := cp.ChannelValues[ch]
		if !ok {
			types[i] = serde.TypeEmpty
			continue
		}
		typ, data, err := s.codec.Seal(binding.Blob{Thread: cfg.ThreadID, NS: cfg.CheckpointNS, Channel: ch, Version: v}, val)
		if err != nil {
			return fmt.Errorf("channel %q: %w", ch, err)
		}
		if data == nil {
			data = []byte{}
		}
		types[i], blobs[i] = typ, data
	}
	b.Queue(s.q.upsertBlobs, cfg.ThreadID, cfg.CheckpointNS, chans, vers, types, blobs, parent, inline)
	return nil
}

// primitive reports whether Python LangGraph would keep v inline in the
// checkpoint document (None, str, int, float, bool).
func primitive(v any) bool {
	switch v.(type) {
	case nil, string, bool, int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64, float32, float64, json.Number:
		return true
	}
	return false
}

// PutWrites implements checkpointer.Saver: one statement, one round trip.
// Each write is stored at checkpointer.WriteIndex; when every write targets a
// special channel the rows are overwritten, otherwise existing rows are kept
// (so a retried task is idempotent), as LangGraph does.
func (s *Saver) PutWrites(ctx context.Context, cfg checkpointer.Config, writes []checkpointer.Write, taskID, taskPath string) error {
	return s.putWrites(ctx, s.db, cfg, writes, taskID, taskPath)
}

// PutWritesTx is PutWrites inside the caller's transaction.
func (s *Saver) PutWritesTx(ctx context.Context, tx pgx.Tx, cfg checkpointer.Config, writes []checkpointer.Write, taskID, taskPath string) error {
	if tx == nil {
		return fmt.Errorf("postgres: put writes: nil transaction")
	}
	return s.putWrites(ctx, tx, cfg, writes, taskID, taskPath)
}

func (s *Saver) putWrites(ctx context.Context, db DB, cfg checkpointer.Config, writes []checkpointer.Write, taskID, taskPath string) error {
	if err := checkpointer.ValidatePutWrites(cfg, writes, taskID, taskPath); err != nil {
		return fmt.Errorf("postgres: put writes: %w", err)
	}
	if len(writes) == 0 {
		return nil
	}
	upsert := checkpointer.UpsertWrites(writes)
	// One row per idx: an upsert keeps the last write of a special channel
	// (as LangGraph's row-by-row upserts do), an insert the first.
	pos := make(map[int]int, len(writes))
	idxs := make([]int32, 0, len(writes))
	chans := make([]string, 0, len(writes))
	types := make([]string, 0, len(writes))
	blobs := make([][]byte, 0, len(writes))
	for i, w := range writes {
		idx := checkpointer.WriteIndex(w.Channel, i)
		typ, data, err := s.codec.Seal(binding.Write{Thread: cfg.ThreadID, NS: cfg.CheckpointNS, Checkpoint: cfg.CheckpointID, Task: taskID, Idx: idx, Channel: w.Channel}, w.Value)
		if err != nil {
			return fmt.Errorf("postgres: put writes: channel %q: %w", w.Channel, err)
		}
		if data == nil {
			data = []byte{} // checkpoint_writes.blob is NOT NULL; LangGraph stores b""
		}
		if j, dup := pos[idx]; dup {
			if upsert {
				chans[j], types[j], blobs[j] = w.Channel, typ, data
			}
			continue
		}
		pos[idx] = len(idxs)
		idxs = append(idxs, int32(idx))
		chans = append(chans, w.Channel)
		types = append(types, typ)
		blobs = append(blobs, data)
	}
	// Rows in index order: two calls writing the same rows in opposite
	// orders (special channels of one task, say) would otherwise each hold
	// a row the other waits for.
	order := make([]int, len(idxs))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return cmp.Compare(idxs[a], idxs[b]) })
	sorted := func() (i32 []int32, c, t []string, bl [][]byte) {
		for _, j := range order {
			i32, c, t, bl = append(i32, idxs[j]), append(c, chans[j]), append(t, types[j]), append(bl, blobs[j])
		}
		return
	}
	idxs, chans, types, blobs = sorted()
	q := s.q.insertWrites
	if upsert {
		q = s.q.upsertWrites
	}
	err := s.retryOwned(ctx, db, func() error {
		_, err := db.Exec(ctx, q, cfg.ThreadID, cfg.CheckpointNS, cfg.CheckpointID, taskID, taskPath, idxs, chans, types, blobs)
		return err
	})
	if err != nil {
		return fmt.Errorf("postgres: put writes: %w", err)
	}
	return nil
}

// retryOwned runs fn, again when PostgreSQL broke a deadlock or a
// serialization conflict by aborting it — but only when db is the saver's
// own pool: a caller's transaction (the …Tx methods) is aborted as a whole
// and its error goes back to the caller.
func (s *Saver) retryOwned(ctx context.Context, db DB, fn func() error) error {
	if db != s.db || s.inTx {
		return fn()
	}
	return pgretry.Do(ctx, fn)
}

// runBatch sends b and reads every result; the first error wins.
func runBatch(ctx context.Context, db DB, b *pgx.Batch) error {
	br := db.SendBatch(ctx, b)
	for range b.Len() {
		if _, err := br.Exec(); err != nil {
			_ = br.Close()
			return err
		}
	}
	return br.Close()
}
