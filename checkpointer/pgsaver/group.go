package pgsaver

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/internal/binding"
	"github.com/memvault/memvault/internal/pgdb"
	"github.com/memvault/memvault/internal/pgfence"
)

var _ checkpointer.GroupWriter = (*driver)(nil)

// WriteGroup implements checkpointer.GroupWriter with pgdb.Group: every
// op's statements (its fence's, then its put or writes, as a lone write
// sends them) in one batch, one implicit transaction, one round trip and
// one commit; an op whose statement fails is left out and the others sent
// again. A put whose parent is gone stores nothing and changes no row, so
// it fails alone without aborting the others.
//
// An op whose fence cannot run in SQL (the key table lives elsewhere) is
// stored alone, as Put and PutWrites store it, before the group. Ops with
// no fence statement are stored first as rows (writeRows): every put in
// one statement, every task's writes in one, their audit records with
// them, in a transaction of their own; the others then in one more.
func (d *driver) WriteGroup(ctx context.Context, ops []checkpointer.GroupOp) []error {
	errs := make([]error, len(ops))
	var group []int // the ops stored together
	for i, op := range ops {
		if _, inSQL := op.Fence().Statements(); inSQL {
			group = append(group, i)
		} else if op.Put != nil {
			errs[i] = d.Put(ctx, op.Put)
		} else {
			errs[i] = d.PutWrites(ctx, op.Writes)
		}
	}
	group = d.writeRows(ctx, ops, group, errs)
	tags, gerrs := pgdb.Group(ctx, d.db, d.own, len(group), func(b *pgx.Batch, k int) {
		op := ops[group[k]]
		pgfence.Queue(b, []checkpointer.WriteFence{op.Fence()})
		if op.Put != nil {
			stmt, args := putStatement(d.q, op.Put)
			b.Queue(stmt, args...)
		} else {
			queueWrites(b, d.q, op.Writes)
		}
	})
	for k, i := range group {
		switch op := ops[i]; {
		case gerrs[k] != nil:
			errs[i] = opErr(op, gerrs[k])
		case op.Put != nil && tags[k].RowsAffected() == 0:
			// The op's last statement is the put's: it changed no row
			// when the parent it inherits from is gone.
			errs[i] = opErr(op, op.Put.ErrParentMissing())
		}
	}
	return errs
}

// opErr is err as Put or PutWrites would return it for op.
func opErr(op checkpointer.GroupOp, err error) error {
	err = binding.FenceErr(err)
	if op.Put != nil {
		return fmt.Errorf("put %s: %w", op.Put.ID, err)
	}
	return fmt.Errorf("put writes: %w", err)
}
