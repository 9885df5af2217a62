package sqlitesaver

import (
	"context"
	"database/sql"

	"github.com/memvault/memvault/checkpointer"
)

var _ checkpointer.GroupWriter = (*driver)(nil)

// WriteGroup implements checkpointer.GroupWriter: one write transaction,
// one commit (one sync of the log), each op in a savepoint of its own,
// rolled back when the op fails (a put whose parent is gone has written
// its value rows by then), so that it stores nothing and the others
// commit. Holding the write lock, each op checks its fence as a lone put
// does. A failure of the savepoints or the commit is every op's error:
// the transaction is rolled back, nothing is stored.
func (d *driver) WriteGroup(ctx context.Context, ops []checkpointer.GroupOp) []error {
	errs := make([]error, len(ops))
	for _, op := range ops {
		d.st.prepareRecord(ctx, d.db.Writer(), op.Record())
	}
	err := d.db.Write(ctx, func(tx *sql.Tx) error {
		t := &sqlTx{d, tx}
		savepoint, rollbackTo, release := tx.StmtContext(ctx, d.st.savepoint), tx.StmtContext(ctx, d.st.rollbackTo), tx.StmtContext(ctx, d.st.release)
		for i, op := range ops {
			if _, err := savepoint.ExecContext(ctx); err != nil {
				return err
			}
			if op.Put != nil {
				errs[i] = t.Put(ctx, op.Put)
			} else {
				errs[i] = t.PutWrites(ctx, op.Writes)
			}
			if errs[i] != nil {
				if _, err := rollbackTo.ExecContext(ctx); err != nil {
					return err
				}
			}
			if _, err := release.ExecContext(ctx); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		for i := range errs {
			errs[i] = err
		}
	}
	return errs
}
