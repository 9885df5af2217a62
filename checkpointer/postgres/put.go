package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/checkpointer/internal/core"
	"github.com/memvault/memvault/internal/binding"
	"github.com/memvault/memvault/internal/pgdrain"
	"github.com/memvault/memvault/internal/pgretry"
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
	r, err := core.Put(ctx, s.codec, s.style, cfg, cp, md, newVersions)
	if err != nil {
		return checkpointer.Config{}, fmt.Errorf("postgres: put: %w", err)
	}
	b, inSQL, err := s.putBatch(ctx, r, cp, newVersions)
	if err != nil {
		return checkpointer.Config{}, fmt.Errorf("postgres: put: %w", err)
	}
	send := func() error { return runBatch(ctx, db, b) }
	if !inSQL {
		send = func() error { return s.fenced(ctx, db, &r.Fence, func(q DB) error { return runBatch(ctx, q, b) }) }
	}
	if err := s.retryOwned(ctx, db, send); err != nil {
		return checkpointer.Config{}, fmt.Errorf("postgres: put: %w", binding.FenceErr(err))
	}
	return checkpointer.Config{ThreadID: r.Thread, CheckpointNS: r.NS, CheckpointID: r.ID}, nil
}

// putBatch queues a Put's rows: the blob rows, then the checkpoint row.
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
	fencedInSQL = s.queueFence(b, &r.Fence) // first: fail before writing anything
	if n := len(blobs); n > 0 {
		chans, vers, types := make([]string, n), make([]string, n), make([]string, n)
		data, inl := make([][]byte, n), make([]bool, n)
		for i, bl := range blobs {
			chans[i], vers[i], types[i], data[i], inl[i] = bl.Channel, bl.Version, bl.Type, bl.Data, inline[bl.Channel]
		}
		b.Queue(s.q.upsertBlobs, r.Thread, r.NS, chans, vers, types, data, parent, inl)
	}
	b.Queue(s.q.upsertCkpt, r.Thread, r.NS, r.ID, parent, json.RawMessage(r.Doc), json.RawMessage(r.Meta))
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
		if !s.queueFence(b, &w.Fence) {
			send = func() error { return s.fenced(ctx, db, &w.Fence, func(q DB) error { return runBatch(ctx, q, b) }) }
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

// queueFence queues f's statements first in b, which runs as one
// transaction: each holds its sealing key's row until the write commits,
// so an erasure waits for the write, or the write fails after it
// (binding.Fence). It reports false when the key table is in another
// database: the write must then run through fenced.
func (s *Saver) queueFence(b *pgx.Batch, f *binding.Fence) bool {
	stmts, ok := s.codec.Statements(f)
	for _, st := range stmts {
		b.Queue(st.SQL, st.Args...)
	}
	return ok
}

// execFence runs f in tx, which began before: its statements, or a check
// of the keys with a key table in another database.
func (s *Saver) execFence(ctx context.Context, tx pgx.Tx, f *binding.Fence) error {
	b := &pgx.Batch{}
	if !s.queueFence(b, f) {
		return s.codec.Check(ctx, f)
	}
	if b.Len() == 0 {
		return nil
	}
	return binding.FenceErr(tx.SendBatch(ctx, b).Close())
}

// fenced runs write in a transaction on db (a savepoint in a caller's)
// that checks f's keys after it began: an erasure then waits for it
// (config drains transactions older than the keys' destruction) or the
// check fails. For a key table in another database than the data.
func (s *Saver) fenced(ctx context.Context, db DB, f *binding.Fence, write func(DB) error) error {
	return pgx.BeginFunc(ctx, db, func(tx pgx.Tx) error {
		if err := s.codec.Check(ctx, f); err != nil {
			return err
		}
		return write(tx)
	})
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

// DrainWrites returns once every write that may have found a destroyed key
// live has committed or failed: an erasure calls it after destroying a
// subject's keys, before it deletes the subject's threads. With the key
// table in the data's database the deletion of the keys already waited for
// them (their fence holds the key rows); otherwise it waits for the
// database's transactions older than the call.
func (s *Saver) DrainWrites(ctx context.Context) error {
	if s.codec.FencesInSQL() {
		return nil
	}
	if err := pgdrain.Wait(ctx, s.db); err != nil {
		return fmt.Errorf("postgres: %w", err)
	}
	return nil
}
