package pgdb

import (
	"context"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// savepoint names the savepoint a Tx is inside a caller's transaction.
const savepoint = "memvault_tx"

// Tx is a transaction that spends no round trip of its own: its BEGIN
// travels with its first batch (pgx.Batch.BeginTx) and its COMMIT with the
// batch its user says is the last, so a transaction of two batches costs
// two round trips where pgx.BeginFunc costs four. Inside a caller's
// transaction (DB is a pgx.Tx) it is a savepoint, opened and released the
// same way. On a DB other than a pool, a connection (pgx's or the
// pool's) or a transaction, whose statements may not share a connection,
// it begins with DB's Begin and ends with the transaction's Commit or
// Rollback.
//
// RunTx runs one, as pgx.BeginFunc does. A Tx is a DB: a statement sent
// by its methods begins the transaction first (one round trip) when no
// batch has, and its Begin makes a savepoint.
type Tx struct {
	db DB
	// conn is the connection the transaction runs on (nil: DB is a
	// pgx.Tx, or of another kind).
	conn *pgx.Conn
	tx   pgx.Tx // the transaction once begun; the caller's, for a savepoint
	sp   bool   // a savepoint in the caller's transaction tx
	// begun: the transaction exists (or its opening failed and it must be
	// rolled back); pending: the batch being built opens it; done: a last
	// batch committed it.
	begun, pending, done bool
}

// RunTx runs fn in a Tx on db and ends it: committed when fn returns nil
// (unless fn's last batch did already), rolled back otherwise, and fn's
// error returned.
func RunTx(ctx context.Context, db DB, fn func(*Tx) error) error {
	t := &Tx{db: db}
	switch c := db.(type) {
	case pgx.Tx:
		t.tx, t.sp = c, true
	case *pgx.Conn:
		t.conn = c
	case *pgxpool.Conn:
		t.conn = c.Conn()
	case *pgxpool.Pool:
		pc, err := c.Acquire(ctx)
		if err != nil {
			return err
		}
		// Released outside a transaction, it goes back to the pool;
		// inside one (a rollback that failed), the pool closes it.
		defer pc.Release()
		t.conn = pc.Conn()
	}
	err := fn(t)
	if !t.begun || t.done {
		return err
	}
	if !t.sp && t.conn == nil {
		if err != nil {
			_ = t.tx.Rollback(ctx)
			return err
		}
		return t.tx.Commit(ctx)
	}
	if err != nil {
		_, _ = t.tx.Exec(ctx, t.end(false))
		return err
	}
	_, err = t.tx.Exec(ctx, t.end(true))
	return err
}

// end is the statement that commits (or releases) the transaction, or
// rolls it back.
func (t *Tx) end(commit bool) string {
	switch {
	case t.sp && commit:
		return "RELEASE SAVEPOINT " + savepoint
	case t.sp:
		return "ROLLBACK TO SAVEPOINT " + savepoint
	case commit:
		return "COMMIT"
	}
	return "ROLLBACK"
}

var _ DB = (*Tx)(nil)

// begin returns the transaction, beginning it (one round trip) when no
// batch has yet.
func (t *Tx) begin(ctx context.Context) (pgx.Tx, error) {
	if t.done {
		return nil, pgx.ErrTxClosed
	}
	if t.begun {
		return t.tx, nil
	}
	var err error
	switch {
	case t.sp:
		_, err = t.tx.Exec(ctx, "SAVEPOINT "+savepoint)
	case t.conn != nil:
		t.tx, err = t.conn.Begin(ctx)
	default:
		t.tx, err = t.db.Begin(ctx)
	}
	if err != nil {
		return nil, err
	}
	t.begun = true
	return t.tx, nil
}

// Nested reports whether t is a savepoint in the caller's transaction:
// a SET LOCAL sent on it would outlive it, into the caller's statements.
func (t *Tx) Nested() bool { return t.sp }

// Batch returns a batch that opens the transaction first when nothing has
// yet; send it with Send.
func (t *Tx) Batch(ctx context.Context) (*pgx.Batch, error) {
	if t.done {
		return nil, pgx.ErrTxClosed
	}
	b := &pgx.Batch{}
	switch {
	case t.begun:
	case t.sp:
		b.Queue("SAVEPOINT " + savepoint)
		t.pending = true
	case t.conn != nil:
		b.BeginTx(pgx.TxOptions{})
		t.pending = true
	default:
		if _, err := t.begin(ctx); err != nil {
			return nil, err
		}
	}
	return b, nil
}

// Send sends b (from Batch) in the transaction and reads every result;
// the first error wins. With last, the transaction commits in the same
// round trip: nothing may be sent in it afterwards.
func (t *Tx) Send(ctx context.Context, b *pgx.Batch, last bool) error {
	if last && (t.sp || t.conn != nil) {
		b.Queue(t.end(true))
	}
	var br pgx.BatchResults
	if t.pending && !t.sp {
		br = t.conn.SendBatch(ctx, b)
	} else {
		br = t.tx.SendBatch(ctx, b)
	}
	err := br.Close()
	if t.pending {
		if !t.sp {
			t.tx = br.Tx()
		}
		t.begun, t.pending = true, false
	}
	t.done = last && err == nil && (t.sp || t.conn != nil)
	return err
}

// SendQueued sends the statements queue queues as one batch of the
// transaction, as Send does (last: its last batch, with the COMMIT); with
// dryRun, inside a savepoint rolled back in the same batch, so that they
// run, their results are read, and nothing they change stays: a removal
// counts what it would delete this way.
func (t *Tx) SendQueued(ctx context.Context, last, dryRun bool, queue func(*pgx.Batch)) error {
	b, err := t.Batch(ctx)
	if err != nil {
		return err
	}
	if dryRun {
		b.Queue("SAVEPOINT memvault_dry_run")
	}
	queue(b)
	if dryRun {
		b.Queue("ROLLBACK TO SAVEPOINT memvault_dry_run")
	}
	return t.Send(ctx, b, last)
}

// Exec implements Querier.
func (t *Tx) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	tx, err := t.begin(ctx)
	if err != nil {
		return pgconn.CommandTag{}, err
	}
	return tx.Exec(ctx, sql, args...)
}

// Query implements Querier.
func (t *Tx) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	tx, err := t.begin(ctx)
	if err != nil {
		return nil, err
	}
	return tx.Query(ctx, sql, args...)
}

// QueryRow implements Querier.
func (t *Tx) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	tx, err := t.begin(ctx)
	if err != nil {
		return errRow{err}
	}
	return tx.QueryRow(ctx, sql, args...)
}

// SendBatch implements Querier; Batch and Send save the BEGIN's round
// trip.
func (t *Tx) SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults {
	tx, err := t.begin(ctx)
	if err != nil {
		return pgx.FailedBatchResults(b, err)
	}
	return tx.SendBatch(ctx, b)
}

// Begin implements DB: a savepoint in the transaction.
func (t *Tx) Begin(ctx context.Context) (pgx.Tx, error) {
	tx, err := t.begin(ctx)
	if err != nil {
		return nil, err
	}
	return tx.Begin(ctx)
}

// errRow is a pgx.Row whose Scan fails with err.
type errRow struct{ err error }

func (r errRow) Scan(...any) error { return r.err }
