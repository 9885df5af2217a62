package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/checkpointer/internal/core"
	"github.com/memvault/memvault/internal/binding"
	"github.com/memvault/memvault/internal/pgfence"
	"github.com/memvault/memvault/internal/pgretry"
)

// Put implements checkpointer.Saver. The blob rows of every channel in
// newVersions and the checkpoint row go to PostgreSQL as one statement
// (after the key fence, in the same pipelined batch): one round trip, and
// one implicit transaction (PostgreSQL commits a pipeline at its single
// Sync), so a checkpoint is never visible without its values. Every value
// becomes a blob row, never inline in the checkpoint document; a channel in
// newVersions without a value gets an "empty" row. A put that inherits
// values from its parent fails with checkpointer.ErrParentMissing, storing
// nothing, when the parent is gone (see queries.putCkpt for how this holds
// against a concurrent sweep).
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
	r, err := core.Put(ctx, s.codec, s.style, cfg, cp, md, newVersions)
	if err != nil {
		return checkpointer.Config{}, fmt.Errorf("postgres: put: %w", err)
	}
	b, inSQL, err := s.putBatch(ctx, r, cp, newVersions)
	if err != nil {
		return checkpointer.Config{}, fmt.Errorf("postgres: put: %w", err)
	}
	var tag pgconn.CommandTag // the checkpoint's insert, the batch's last statement
	send := func() (err error) { tag, err = runBatchTag(ctx, db, b); return err }
	if !inSQL {
		send = func() error {
			return pgfence.InTx(ctx, s.codec, db, &r.Fence, func(tx pgx.Tx) (err error) { tag, err = runBatchTag(ctx, tx, b); return err })
		}
	}
	if err := s.retryOwned(ctx, db, send); err != nil {
		return checkpointer.Config{}, fmt.Errorf("postgres: put: %w", binding.FenceErr(err))
	}
	if tag.RowsAffected() == 0 { // the parent it inherits from is gone: nothing was stored
		return checkpointer.Config{}, fmt.Errorf("postgres: put %s: %w", r.ID, core.ParentMissing(r.Thread, r.NS, r.Parent))
	}
	return checkpointer.Config{ThreadID: r.Thread, CheckpointNS: r.NS, CheckpointID: r.ID}, nil
}

// putBatch queues a Put's statement: the blob rows, then the checkpoint
// row, stored only when the parent it inherits from is there.
//
// Python LangGraph keeps primitive values inline in the checkpoint
// document, without blob rows. When a Put continues a checkpoint Python
// wrote, its unchanged primitive channels would lose their value; so they
// are sent too, flagged inline, and the statement inserts them only when the
// parent's document holds them inline at the same version (never when
// memvault or JS wrote the parent).
func (s *Saver) putBatch(ctx context.Context, r *core.Checkpoint, cp *checkpointer.Checkpoint, newVersions map[string]string) (b *pgx.Batch, fencedInSQL bool, err error) {
	var parent *string
	if r.Parent != "" {
		parent = &r.Parent
	}
	blobs := r.Blobs
	var inline map[string]bool
	if parent != nil {
		for ch, val := range cp.ChannelValues {
			if _, isNew := newVersions[ch]; isNew || cp.ChannelVersions[ch] == "" || !primitive(val) {
				continue
			}
			b, err := core.SealBlob(ctx, s.codec, r.Thread, r.NS, ch, cp.ChannelVersions[ch], cp.ChannelValues, &r.Fence)
			if err != nil {
				return nil, false, err
			}
			if inline == nil {
				inline = map[string]bool{}
			}
			inline[ch] = true
			blobs = append(blobs, b)
		}
		// Concurrent Puts to a thread lock rows in one order.
		slices.SortFunc(blobs, func(a, b core.Blob) int { return strings.Compare(a.Channel, b.Channel) })
	}
	b = &pgx.Batch{}
	fencedInSQL = pgfence.Queue(s.codec, b, &r.Fence) // first: fail before writing anything
	n := len(blobs)
	chans, vers, types := make([]string, n), make([]string, n), make([]string, n)
	data, inl := make([][]byte, n), make([]bool, n)
	for i, bl := range blobs {
		chans[i], vers[i], types[i], data[i], inl[i] = bl.Channel, bl.Version, bl.Type, bl.Data, inline[bl.Channel]
	}
	b.Queue(s.q.putCkpt, r.Thread, r.NS, r.ID, parent, json.RawMessage(r.Doc), json.RawMessage(r.Meta),
		chans, vers, types, data, inl, r.NeedsParent)
	return b, fencedInSQL, nil
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
// Each write is stored at core.WriteIndex; when every write targets a
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
	w, err := core.PutWrites(ctx, s.codec, cfg, writes, taskID, taskPath)
	if err != nil {
		return fmt.Errorf("postgres: put writes: %w", err)
	}
	if w == nil {
		return nil
	}
	n := len(w.Rows)
	idxs, chans, types, blobs := make([]int32, n), make([]string, n), make([]string, n), make([][]byte, n)
	for i, r := range w.Rows {
		idxs[i], chans[i], types[i], blobs[i] = int32(r.Idx), r.Channel, r.Type, r.Data
	}
	q := s.q.insertWrites
	if w.Upsert {
		q = s.q.upsertWrites
	}
	if !w.Fence.Empty() {
		// The fence and the rows in one implicit transaction.
		b := &pgx.Batch{}
		send := func() error { return runBatch(ctx, db, b) }
		if !pgfence.Queue(s.codec, b, &w.Fence) {
			send = func() error {
				return pgfence.InTx(ctx, s.codec, db, &w.Fence, func(tx pgx.Tx) error { return runBatch(ctx, tx, b) })
			}
		}
		b.Queue(q, w.Thread, w.NS, w.Checkpoint, w.Task, w.TaskPath, idxs, chans, types, blobs)
		if err := s.retryOwned(ctx, db, send); err != nil {
			return fmt.Errorf("postgres: put writes: %w", binding.FenceErr(err))
		}
		return nil
	}
	err = s.retryOwned(ctx, db, func() error {
		_, err := db.Exec(ctx, q, w.Thread, w.NS, w.Checkpoint, w.Task, w.TaskPath, idxs, chans, types, blobs)
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
	_, err := runBatchTag(ctx, db, b)
	return err
}

// runBatchTag is runBatch returning the command tag of b's last statement.
func runBatchTag(ctx context.Context, db DB, b *pgx.Batch) (pgconn.CommandTag, error) {
	br := db.SendBatch(ctx, b)
	var tag pgconn.CommandTag
	for range b.Len() {
		t, err := br.Exec()
		if err != nil {
			_ = br.Close()
			return tag, err
		}
		tag = t
	}
	return tag, br.Close()
}

// DrainWrites returns once every write that may have found a destroyed key
// live has committed or failed (pgfence.Drain): an erasure calls it after
// destroying a subject's keys, before it deletes the subject's threads.
func (s *Saver) DrainWrites(ctx context.Context) error {
	if err := pgfence.Drain(ctx, s.codec, s.db); err != nil {
		return fmt.Errorf("postgres: %w", err)
	}
	return nil
}
