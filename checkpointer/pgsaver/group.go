package pgsaver

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/internal/binding"
	"github.com/memvault/memvault/internal/pgretry"
)

var _ checkpointer.GroupWriter = (*driver)(nil)

// WriteGroup implements checkpointer.GroupWriter: every op's statements
// (its fence's, then its put or writes, as a lone write sends them) in
// one batch, one implicit transaction, one round trip and one commit. A
// put whose parent is gone stores nothing and changes no row, so it fails
// alone without aborting the others. A statement that fails aborts the
// transaction: its op gets its error — the ops' statements are sent in
// order, so the op that failed is the one whose statement did — and the
// others are sent again without it, in a batch of their own (failures
// are rare: an erased subject's fence, a constraint). A deadlock or a
// serialization failure runs the whole batch again (pgretry); any other
// error (the connection, the commit) is every op's.
//
// An op whose fence cannot run in SQL (the key table lives elsewhere) is
// stored alone, as Put and PutWrites store it, before the group.
func (d *driver) WriteGroup(ctx context.Context, ops []checkpointer.GroupOp) []error {
	errs := make([]error, len(ops))
	pending := make([]int, 0, len(ops))
	for i, op := range ops {
		if _, inSQL := opFence(op).Statements(); inSQL {
			pending = append(pending, i)
		} else if op.Put != nil {
			errs[i] = d.Put(ctx, op.Put)
		} else {
			errs[i] = d.PutWrites(ctx, op.Writes)
		}
	}
	for len(pending) > 0 {
		var failed int
		var missing []bool
		err := pgretry.Owned(ctx, d.own, func() (err error) {
			failed, missing, err = d.sendGroup(ctx, ops, pending)
			return err
		})
		if err == nil {
			for k, i := range pending {
				if missing[k] {
					errs[i] = opErr(ops[i], ops[i].Put.ErrParentMissing())
				}
			}
			return errs
		}
		if failed < 0 {
			for _, i := range pending {
				errs[i] = opErr(ops[i], err)
			}
			return errs
		}
		errs[pending[failed]] = opErr(ops[pending[failed]], err)
		pending = slices.Delete(pending, failed, failed+1)
	}
	return errs
}

// sendGroup sends the statements of ops[pending] in one batch. On
// success, missing tells which of them are puts whose parent is gone
// (nothing of theirs stored). On an error of a statement that is the
// op's own (a PostgreSQL error other than a deadlock or a serialization
// failure), failed is the op's index in pending; otherwise -1.
func (d *driver) sendGroup(ctx context.Context, ops []checkpointer.GroupOp, pending []int) (failed int, missing []bool, err error) {
	b := &pgx.Batch{}
	var owner []int // the index in pending of each statement's op
	for k, i := range pending {
		op := ops[i]
		stmts, _ := opFence(op).Statements()
		for _, st := range stmts {
			b.Queue(st.SQL, st.Args...)
		}
		if op.Put != nil {
			stmt, args := putStatement(d.q, op.Put)
			b.Queue(stmt, args...)
		} else {
			queueWrites(b, d.q, op.Writes)
		}
		for len(owner) < b.Len() {
			owner = append(owner, k)
		}
	}
	missing = make([]bool, len(pending))
	br := d.db.SendBatch(ctx, b)
	for n := range b.Len() {
		tag, err := br.Exec()
		if err != nil {
			_ = br.Close()
			var pe *pgconn.PgError
			if errors.As(err, &pe) && !pgretry.Retryable(err) {
				return owner[n], nil, err
			}
			return -1, nil, err
		}
		k := owner[n]
		if op := ops[pending[k]]; op.Put != nil && (n+1 == b.Len() || owner[n+1] != k) {
			// The op's last statement is the put's: it changed no row
			// when the parent it inherits from is gone.
			missing[k] = tag.RowsAffected() == 0
		}
	}
	if err := br.Close(); err != nil {
		return -1, nil, err
	}
	return -1, missing, nil
}

// opFence is op's fence.
func opFence(op checkpointer.GroupOp) checkpointer.WriteFence {
	if op.Put != nil {
		return op.Put.Fence
	}
	return op.Writes.Fence
}

// opErr is err as Put or PutWrites would return it for op.
func opErr(op checkpointer.GroupOp, err error) error {
	err = binding.FenceErr(err)
	if op.Put != nil {
		return fmt.Errorf("put %s: %w", op.Put.ID, err)
	}
	return fmt.Errorf("put writes: %w", err)
}
