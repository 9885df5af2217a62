package pgdb

import (
	"context"
	"errors"
	"slices"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/memvault/memvault/internal/pgretry"
)

// Group stores n independent writes ("ops": each the statements queue
// queues for it) in one batch on db — one implicit transaction, one round
// trip, one commit — as group commit needs: concurrent callers share the
// commit, and each op stays isolated from the others. It returns, at each
// op's index, the command tag of its last statement and its error.
//
// A statement that fails aborts the transaction. When the error is the
// op's own (a PostgreSQL error other than a deadlock or a serialization
// failure: a constraint, a fence refusing), that op gets it — the ops'
// statements are sent in order, so the op that failed is the one whose
// statement did — and the others are sent again without it, in a batch of
// their own; failures are rare. A deadlock or a serialization failure
// runs the whole batch again when own (db is the caller's own pool or
// connection, see pgretry.Owned); any other error (the connection, the
// commit) is every remaining op's.
func Group(ctx context.Context, db Querier, own bool, n int, queue func(b *pgx.Batch, op int)) ([]pgconn.CommandTag, []error) {
	tags, errs := make([]pgconn.CommandTag, n), make([]error, n)
	pending := make([]int, n)
	for i := range pending {
		pending[i] = i
	}
	for len(pending) > 0 {
		failed := -1
		err := pgretry.Owned(ctx, own, func() (err error) {
			failed, err = sendGroup(ctx, db, pending, queue, tags)
			return err
		})
		switch {
		case err == nil:
			return tags, errs
		case failed < 0:
			for _, i := range pending {
				errs[i] = err
			}
			return tags, errs
		}
		errs[pending[failed]] = err
		pending = slices.Delete(pending, failed, failed+1)
	}
	return tags, errs
}

// sendGroup sends the statements of the ops of pending in one batch and
// sets each one's tag in tags. On an error of a statement that is the
// op's own (see Group), failed is the op's index in pending; otherwise
// -1.
func sendGroup(ctx context.Context, db Querier, pending []int, queue func(*pgx.Batch, int), tags []pgconn.CommandTag) (failed int, err error) {
	b := &pgx.Batch{}
	var owner []int // the index in pending of each statement's op
	for k, i := range pending {
		queue(b, i)
		for len(owner) < b.Len() {
			owner = append(owner, k)
		}
	}
	br := db.SendBatch(ctx, b)
	for n := range b.Len() {
		tag, err := br.Exec()
		if err != nil {
			_ = br.Close()
			var pe *pgconn.PgError
			if errors.As(err, &pe) && !pgretry.Retryable(err) {
				return owner[n], err
			}
			return -1, err
		}
		tags[pending[owner[n]]] = tag
	}
	return -1, br.Close()
}
