package pgfence

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/memvault/memvault/internal/binding"
	"github.com/memvault/memvault/internal/pgdb"
)

// Statement is one statement of a SQL fence and its arguments: the
// underlying type of checkpointer.FenceStatement and store.FenceStatement.
type Statement = struct {
	SQL  string
	Args []any
}

// Fence is a write's fence as a contract's seam hands it to a driver:
// checkpointer.WriteFence and store.WriteFence are Fences, each with its
// contract's statement type S.
type Fence[S ~Statement] interface {
	Check(ctx context.Context) error
	Statements() ([]S, bool)
}

// Queue queues the statements of fs in b, which must run as one
// transaction (a batch's implicit one, or inside a transaction), before
// the write's rows: the key table's fence and the data database's erasure
// guard. It reports false when the key table is in another database: the
// write must then run through InTx (or Exec, inside its transaction),
// which checks the keys as well.
func Queue[S ~Statement, F Fence[S]](b *pgx.Batch, fs []F) bool {
	inSQL := true
	for _, f := range fs {
		stmts, ok := f.Statements()
		inSQL = inSQL && ok
		for _, st := range stmts {
			b.Queue(Statement(st).SQL, Statement(st).Args...)
		}
	}
	return inSQL
}

// Check checks the keys of fs (a key table in another database).
func Check[S ~Statement, F Fence[S]](ctx context.Context, fs []F) error {
	for _, f := range fs {
		if err := f.Check(ctx); err != nil {
			return err
		}
	}
	return nil
}

// Exec runs fs in tx, which began before: their statements, and a check
// of their keys with a key table in another database.
func Exec[S ~Statement, F Fence[S]](ctx context.Context, tx Querier, fs []F) error {
	b := &pgx.Batch{}
	if !Queue[S](b, fs) {
		if err := Check[S](ctx, fs); err != nil {
			return err
		}
	}
	if b.Len() == 0 {
		return nil
	}
	return binding.FenceErr(tx.SendBatch(ctx, b).Close())
}

// Beginner begins a transaction (a pool, a connection, or a transaction,
// whose Begin makes a savepoint).
type Beginner = pgdb.DB

// InTx runs write in a transaction on db that checks the keys of fs after
// it began: an erasure then waits for it (Drain) or the check fails. For a
// key table in another database than the data.
func InTx[S ~Statement, F Fence[S]](ctx context.Context, db Beginner, fs []F, write func(tx pgx.Tx) error) error {
	return pgx.BeginFunc(ctx, db, func(tx pgx.Tx) error {
		if err := Check[S](ctx, fs); err != nil {
			return err
		}
		return write(tx)
	})
}

// Send sends b, a write's batch that starts with the statements of fs
// (Queue reported inSQL), as one implicit transaction on db; when fs has
// no SQL statements (the key table lives in another database), b runs in
// a transaction of InTx. A refusing fence's error comes back as
// binding.FenceErr makes it, whichever way it ran.
func Send[S ~Statement, F Fence[S]](ctx context.Context, db Beginner, fs []F, inSQL bool, b *pgx.Batch) error {
	if inSQL {
		return binding.FenceErr(db.SendBatch(ctx, b).Close())
	}
	return binding.FenceErr(InTx[S](ctx, db, fs, func(tx pgx.Tx) error {
		return tx.SendBatch(ctx, b).Close()
	}))
}

// Querier is what Drain reads the server's activity with.
type Querier = pgdb.Querier

// Drain returns once every write that may have found a destroyed key live
// has committed or failed. With the key table in the data's database the
// keys' deletion already waited for them (their fence holds the key rows),
// so it returns at once; otherwise it waits until no session of the
// database (other than its own) is inside a transaction that began before
// the call, or returns ctx's error naming how many still are.
func Drain(ctx context.Context, c binding.Codec, db Querier) error {
	if c.FencesInSQL() {
		return nil
	}
	var since time.Time
	if err := db.QueryRow(ctx, `SELECT clock_timestamp()`).Scan(&since); err != nil {
		return fmt.Errorf("drain writes: %w", err)
	}
	pause := 20 * time.Millisecond
	for {
		var n int
		err := db.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity
WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_type = 'client backend' AND xact_start < $1`, since).Scan(&n)
		if err != nil {
			return fmt.Errorf("drain writes: %w", err)
		}
		if n == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("drain writes: %d transactions older than the erasure are still open: %w", n, ctx.Err())
		case <-time.After(pause):
		}
		pause = min(2*pause, time.Second)
	}
}
