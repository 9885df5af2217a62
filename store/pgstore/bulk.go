package pgstore

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/pgvector/pgvector-go"

	"github.com/memvault/memvault/internal/pgfence"
	"github.com/memvault/memvault/internal/pgretry"
)

// defaultCopyMin is how many items a write puts before it goes through
// COPY rather than unnest'ed array parameters. Below it, the one-round-trip
// batch of sendPuts is faster (COPY costs a transaction of its own and two
// temporary tables); above it, arrays of thousands of values and vectors
// make PostgreSQL parse and unnest huge parameters, where COPY streams the
// rows in binary.
const defaultCopyMin = 256

// stage tables: temporary, dropped at the end of the write (and at commit
// in any case), so that a caller's transaction can run several bulk
// writes.
// Qualified by pg_temp, so that no table of the search_path shadows them.
const (
	stageItems   = "pg_temp.memvault_stage_items"
	stageVectors = "pg_temp.memvault_stage_vectors"
)

// writeBulk writes prepared puts by COPY into temporary staging tables,
// then the same statements as sendPuts reading from them: the deletes,
// one INSERT ... ON CONFLICT of the items, the removal of stale vectors,
// one INSERT ... ON CONFLICT of the vectors. Rows are upserted in the
// order sendPuts sends them (items in key order, see encodePuts; vectors
// item by item in field order), an ordinal column carrying it, so that a
// bulk write and an ordinary one lock rows in the same order and cannot
// deadlock each other. Values were sealed by encodePuts, as for sendPuts.
//
// done is false when q cannot COPY with binary vectors (the simple
// protocol, a Querier of another kind): the caller then writes the
// ordinary way.
func (d *driver) writeBulk(ctx context.Context, q DB, owned bool, r *putRows, vecs [][]float32, now time.Time) (done bool, err error) {
	var (
		conn   *pgx.Conn
		callTx pgx.Tx // the caller's transaction, if q is one
	)
	switch x := q.(type) {
	case *pgxpool.Pool:
		c, err := x.Acquire(ctx)
		if err != nil {
			return true, fmt.Errorf("postgres: put: %w", err)
		}
		defer c.Release()
		conn = c.Conn()
	case pgx.Tx:
		conn, callTx = x.Conn(), x
	case *pgx.Conn:
		conn = x
	default:
		return false, nil
	}
	if conn.Config().DefaultQueryExecMode == pgx.QueryExecModeSimpleProtocol {
		return false, nil // COPY's binary rows need pgvector's codecs; keep text
	}
	if len(vecs) > 0 && !registerVectorTypes(ctx, conn) {
		return false, nil
	}
	if callTx != nil {
		// A caller's transaction is the caller's to retry.
		if err := d.copyPuts(ctx, callTx, r, vecs, now); err != nil {
			return true, fmt.Errorf("postgres: put: %w", err)
		}
		return true, nil
	}
	run := func() error {
		return pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error { return d.copyPuts(ctx, tx, r, vecs, now) })
	}
	if err := pgretry.Owned(ctx, owned, run); err != nil {
		return true, fmt.Errorf("postgres: put: %w", err)
	}
	return true, nil
}

// copyPuts runs a bulk write in tx (see writeBulk).
func (d *driver) copyPuts(ctx context.Context, tx pgx.Tx, r *putRows, vecs [][]float32, now time.Time) error {
	if err := pgfence.Exec(ctx, tx, r.fence); err != nil {
		return err
	}
	if len(r.del.key) > 0 {
		if _, err := tx.Exec(ctx, d.deleteItems(), r.del.prefix, r.del.key); err != nil {
			return err
		}
	}
	if _, err := tx.Exec(ctx, `CREATE TEMP TABLE `+stageItems+` (
    ord int, prefix text, key text, value text, expires_at timestamptz, ttl_minutes int
) ON COMMIT DROP`); err != nil {
		return err
	}
	if _, err := tx.CopyFrom(ctx, pgx.Identifier{"pg_temp", "memvault_stage_items"},
		[]string{"ord", "prefix", "key", "value", "expires_at", "ttl_minutes"},
		pgx.CopyFromSlice(len(r.up.key), func(i int) ([]any, error) {
			return []any{int32(i), r.up.prefix[i], r.up.key[i], r.up.value[i], r.exp[i], r.ttlM[i]}, nil
		})); err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, d.upsertItems(stageItems+` u ORDER BY u.ord`, "$1"), now); err != nil {
		return err
	}
	if len(r.reidx.key) > 0 {
		if _, err := tx.Exec(ctx, `CREATE TEMP TABLE `+stageVectors+` (
    ord int, prefix text, key text, field_name text, embedding `+d.index.vecType+`
) ON COMMIT DROP`); err != nil {
			return err
		}
		if len(vecs) > 0 {
			embs := d.copyVectors(vecs)
			if _, err := tx.CopyFrom(ctx, pgx.Identifier{"pg_temp", "memvault_stage_vectors"},
				[]string{"ord", "prefix", "key", "field_name", "embedding"},
				pgx.CopyFromSlice(len(vecs), func(i int) ([]any, error) {
					return []any{int32(i), r.vec.prefix[i], r.vec.key[i], r.vec.field[i], embs(i)}, nil
				})); err != nil {
				return err
			}
		}
		// As queueVectors: the vectors of fields the items no longer
		// have go (the same statement: see deleteStaleVectors).
		if _, err := tx.Exec(ctx, d.deleteStaleVectors(), r.reidx.prefix, r.reidx.key, r.vec.prefix, r.vec.key, r.vec.field); err != nil {
			return err
		}
		if len(vecs) > 0 {
			if _, err := tx.Exec(ctx, d.upsertVectors(stageVectors+` n ORDER BY n.ord`, "$1"), now); err != nil {
				return err
			}
		}
		if _, err := tx.Exec(ctx, `DROP TABLE `+stageVectors); err != nil {
			return err
		}
	}
	_, err := tx.Exec(ctx, `DROP TABLE `+stageItems)
	return err
}

// copyVectors returns vector i of vecs as COPY sends it: pgvector-go's
// binary value of the column's type.
func (d *driver) copyVectors(vecs [][]float32) func(i int) any {
	if d.index.vecType == "halfvec" {
		return func(i int) any { return pgvector.NewHalfVector(vecs[i]) }
	}
	return func(i int) any { return pgvector.NewVector(vecs[i]) }
}
