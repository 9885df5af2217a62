package pgstore

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/memvault/memvault/internal/pgfence"
	"github.com/memvault/memvault/internal/pgretry"
	"github.com/memvault/memvault/store"
	"github.com/memvault/memvault/store/engine"
)

// on is the store's engine on the driver bound to a caller's transaction.
func (s *Store) on(tx pgx.Tx) *engine.Engine { return engine.On(s.Engine, bound{s.d, tx}) }

// PutTx is Put inside the caller's transaction, so a memory commits or rolls
// back with the caller's own rows.
func (s *Store) PutTx(ctx context.Context, tx pgx.Tx, ns store.Namespace, key string, value map[string]any, opts ...store.PutOption) error {
	if value == nil {
		return fmt.Errorf("%w: nil value (use DeleteTx)", store.ErrInvalidArgument)
	}
	return s.on(tx).Put(ctx, ns, key, value, opts...)
}

// DeleteTx is Delete inside the caller's transaction.
func (s *Store) DeleteTx(ctx context.Context, tx pgx.Tx, ns store.Namespace, key string) error {
	return s.on(tx).Delete(ctx, ns, key)
}

// PutBatchTx writes several puts and deletes (PutOp with a nil Value)
// inside the caller's transaction; of several ops on one key the last wins.
func (s *Store) PutBatchTx(ctx context.Context, tx pgx.Tx, ops []store.PutOp) error {
	all := make([]store.Op, len(ops))
	for i, op := range ops {
		all[i] = op
	}
	_, err := s.on(tx).Batch(ctx, all)
	return err
}

// PutIfTx is PutIf inside the caller's transaction (in a savepoint, so a
// conflict leaves the caller's transaction usable).
func (s *Store) PutIfTx(ctx context.Context, tx pgx.Tx, ns store.Namespace, key string, value map[string]any, cond store.PutCondition, opts ...store.PutOption) error {
	return s.on(tx).PutIf(ctx, ns, key, value, cond, opts...)
}

// Put queues a row for Commit (the engine writes only in write
// transactions), or, after PutCondition, writes it at once
// under the condition (see condPut).
func (t *pgTx) Put(ctx context.Context, w store.RowWrite) error {
	if t.cond != nil {
		cond := *t.cond
		t.cond = nil
		return t.condPut(ctx, w, cond)
	}
	t.puts = append(t.puts, w)
	return nil
}

// Delete queues a delete for Commit.
func (t *pgTx) Delete(_ context.Context, k store.RowKey) error {
	t.dels = append(t.dels, k)
	return nil
}

// Fence implements engine.FenceTx: the fence's statements go first in the
// write's transaction, at Commit (pgfence).
func (t *pgTx) Fence(_ context.Context, f store.WriteFence) error {
	t.fence = append(t.fence, f)
	return nil
}

// Record implements engine.RecordTx: the record goes with the rows, in
// their batch's one transaction (or the conditional put's), after the
// fence and before the rows.
func (t *pgTx) Record(_ context.Context, r *store.RecordRow) error {
	t.records = append(t.records, r)
	return nil
}

// queueRecords queues the inserts of records in b.
func queueRecords(b *pgx.Batch, records []*store.RecordRow) {
	for _, r := range records {
		b.Queue(r.InsertSQL(func(i int) string { return fmt.Sprintf("$%d", i+1) }), r.Values...)
	}
}

// PutCondition implements engine.CondTx.
func (t *pgTx) PutCondition(cond store.PutCondition) { t.cond = &cond }

// putRows turns rows to write into the columns of a put's statements, in
// key order: two batches putting the same keys in opposite orders would
// otherwise each lock a row the other waits for.
func (d *driver) putRows(puts []store.RowWrite, dels []store.RowKey) (r *putRows, vecs [][]float32, now time.Time, err error) {
	slices.SortFunc(puts, func(a, b store.RowWrite) int { return compareKeys(a.RowKey, b.RowKey) })
	slices.SortFunc(dels, compareKeys)
	r = &putRows{}
	for _, k := range dels {
		r.del.prefix = append(r.del.prefix, k.NS)
		r.del.key = append(r.del.key, k.Key)
	}
	for i := range puts {
		w := &puts[i]
		now = pgTime(w.Updated) // the same for every row of a write
		raw, err := d.jsonb(w.Value)
		if err != nil {
			return nil, nil, now, err
		}
		r.up.prefix = append(r.up.prefix, w.NS)
		r.up.key = append(r.up.key, w.Key)
		r.up.value = append(r.up.value, raw)
		if !w.Expires.IsZero() {
			e, m := w.Expires, int32(w.TTLMinutes)
			r.exp, r.ttlM = append(r.exp, &e), append(r.ttlM, &m)
		} else {
			r.exp, r.ttlM = append(r.exp, nil), append(r.ttlM, nil)
		}
		if !w.Reindex || d.index == nil {
			continue // no store_vectors table: index options are moot
		}
		r.reidx.prefix = append(r.reidx.prefix, w.NS)
		r.reidx.key = append(r.reidx.key, w.Key)
		for _, v := range w.Vectors {
			r.vec.prefix = append(r.vec.prefix, w.NS)
			r.vec.key = append(r.vec.key, w.Key)
			r.vec.field = append(r.vec.field, v.Field)
			vecs = append(vecs, v.Vec)
		}
	}
	return r, vecs, now, nil
}

func compareKeys(a, b store.RowKey) int {
	return cmp.Or(strings.Compare(a.NS, b.NS), strings.Compare(a.Key, b.Key))
}

// write sends prepared puts on q, vectors in pgvector's binary format
// where the connection has it registered. owned says q is the store's own
// pool, whose aborted batches are retried.
func (d *driver) write(ctx context.Context, q DB, owned bool, r *putRows, vecs [][]float32, now time.Time) error {
	d.topo.Distributed(ctx, d.db)                          // for ShardFilter
	if len(r.up.key) >= d.copyMin && len(r.records) == 0 { // a record goes in the batch
		if done, err := d.writeBulk(ctx, q, owned, r, vecs, now); done {
			return err
		}
	}
	if len(vecs) == 0 {
		return d.sendPuts(ctx, q, owned, r, nil, false, now)
	}
	return vectorConn(ctx, q, func(vq Querier, binary bool) error {
		return d.sendPuts(ctx, vq, owned, r, vecs, binary, now)
	})
}

// putRows are the columns of one put's statements.
type putRows struct {
	del     struct{ prefix, key []string }
	up      struct{ prefix, key, value []string }
	exp     []*time.Time
	ttlM    []*int32
	reidx   struct{ prefix, key []string }
	vec     struct{ prefix, key, field []string } // one per vector in vecs
	fence   []store.WriteFence                    // the keys that sealed the values
	records []*store.RecordRow                    // audit records of the write
}

// sendPuts sends a put's statements as one batch (one implicit
// transaction) on q. owned says q is the store's own pool, whose aborted
// batches are retried; vectors go in binary when binary is set.
func (d *driver) sendPuts(ctx context.Context, q Querier, owned bool, r *putRows, vecs [][]float32, binary bool, now time.Time) error {
	b := &pgx.Batch{}
	inSQL := pgfence.Queue(b, r.fence)
	queueRecords(b, r.records)
	if len(r.del.key) > 0 {
		b.Queue(d.deleteItems(), r.del.prefix, r.del.key)
	}
	if len(r.up.key) > 0 {
		b.Queue(d.upsertItems(`unnest($1::text[], $2::text[], $3::text[], $5::timestamptz[], $6::int[])
    AS u(prefix, key, value, expires_at, ttl_minutes)`, "$4"), r.up.prefix, r.up.key, r.up.value, now, r.exp, r.ttlM)
	}
	d.queueVectors(b, r, vecs, binary, now)
	if b.Len() == 0 {
		return nil
	}
	db, ok := q.(pgfence.Beginner) // every Querier memvault is given can begin
	if !ok {
		return fmt.Errorf("postgres: put: %T cannot begin the transaction that fences the put", q)
	}
	if err := pgretry.Owned(ctx, owned, func() error { return pgfence.Send(ctx, db, r.fence, inSQL, b) }); err != nil {
		return fmt.Errorf("postgres: put: %w", err)
	}
	return nil
}

// queueVectors queues the vector statements of a put: the vectors of
// fields an item no longer embeds go, the new ones are upserted.
func (d *driver) queueVectors(b *pgx.Batch, r *putRows, vecs [][]float32, binary bool, now time.Time) {
	if len(r.reidx.key) > 0 {
		b.Queue(d.deleteStaleVectors(), r.reidx.prefix, r.reidx.key, r.vec.prefix, r.vec.key, r.vec.field)
	}
	if len(vecs) > 0 {
		embs, arrayType := d.vectorBatch(binary, vecs)
		b.Queue(d.upsertVectors(`unnest($1::text[], $2::text[], $3::text[], $4::`+arrayType+`)
    AS n(prefix, key, field_name, embedding)`, "$5"), r.vec.prefix, r.vec.key, r.vec.field, embs, now)
	}
}

// The statements of a write, reading rows from a set of rows (unnest'ed
// parameters, or COPY's staging tables), the time of the write in
// parameter now.

// deleteItems deletes the items $1, $2 (prefixes, keys).
func (d *driver) deleteItems() string {
	return `DELETE FROM ` + d.t.store + ` s USING unnest($1::text[], $2::text[]) AS d(prefix, key)
WHERE s.prefix = d.prefix AND s.key = d.key` + d.topo.ShardFilter("s.prefix", "$1::text[]")
}

// upsertItems writes the rows u (prefix, key, value, expires_at,
// ttl_minutes), keeping created_at.
func (d *driver) upsertItems(u, now string) string {
	return `INSERT INTO ` + d.t.store + ` AS s (prefix, key, value, created_at, updated_at, expires_at, ttl_minutes)
SELECT u.prefix, u.key, u.value::jsonb, ` + now + `, ` + now + `, u.expires_at, u.ttl_minutes FROM ` + u + `
ON CONFLICT (prefix, key) DO UPDATE SET
    value = EXCLUDED.value,
    -- A write always moves updated_at forward, even within one clock
    -- tick, so that it names a version (store.PutCondition).
    updated_at = GREATEST(EXCLUDED.updated_at, ` + nextTick("s.updated_at") + `),
    expires_at = EXCLUDED.expires_at,
    ttl_minutes = EXCLUDED.ttl_minutes`
}

// nextTick is the SQL of timestamptz column col plus one microsecond,
// the least updated_at a write after col's may take. It is computed in
// UTC as a timestamp without time zone: timestamptz + interval is STABLE
// (a day's length depends on the time zone), and Citus refuses any
// function that is not IMMUTABLE in the DO UPDATE SET clause of an
// INSERT on a distributed table (0A000); these conversions and
// timestamp + interval are IMMUTABLE, and for a microsecond the result is
// the same.
func nextTick(col string) string {
	return `((` + col + ` AT TIME ZONE 'UTC') + interval '1 microsecond') AT TIME ZONE 'UTC'`
}

// deleteStaleVectors deletes the vectors of the items $1, $2 (prefixes,
// keys: the items whose vectors a put replaces) that are not among the new
// vectors $3, $4, $5 (prefixes, keys, fields): fields the item no longer
// has (or all of them, for WithoutIndex). LangGraph leaves them behind,
// stale. On Citus the prefixes are repeated as a condition on v.prefix
// (pgcitus.Topology.ShardFilter).
//
// The bulk path (copyPuts) sends the same statement with the same arrays,
// keys only, rather than joining its staging tables: Citus refuses a
// DELETE joining a distributed table with a local one, as the temporary
// staging tables are (0A000 "relation memvault_stage_vectors is not
// distributed").
func (d *driver) deleteStaleVectors() string {
	return `DELETE FROM ` + d.t.vectors + ` v USING unnest($1::text[], $2::text[]) AS r(prefix, key)
WHERE v.prefix = r.prefix AND v.key = r.key` + d.topo.ShardFilter("v.prefix", "$1::text[]") + `
  AND NOT EXISTS (SELECT 1 FROM unnest($3::text[], $4::text[], $5::text[]) AS n(prefix, key, field_name)
    WHERE n.prefix = v.prefix AND n.key = v.key AND n.field_name = v.field_name)`
}

// upsertVectors writes the vectors n (prefix, key, field_name, embedding).
func (d *driver) upsertVectors(n, now string) string {
	return `INSERT INTO ` + d.t.vectors + ` (prefix, key, field_name, embedding, created_at, updated_at)
SELECT n.prefix, n.key, n.field_name, n.embedding::` + d.index.vecType + `, ` + now + `, ` + now + ` FROM ` + n + `
ON CONFLICT (prefix, key, field_name) DO UPDATE SET
    embedding = EXCLUDED.embedding,
    updated_at = EXCLUDED.updated_at`
}

// DrainWrites returns once every put that may have found a destroyed key
// live has committed or failed (pgfence.Drain): an erasure calls it after
// destroying a subject's keys, before it deletes the subject's items.
func (s *Store) DrainWrites(ctx context.Context) error {
	if err := pgfence.Drain(ctx, s.d.codec, s.d.db); err != nil {
		return fmt.Errorf("postgres: %w", err)
	}
	return nil
}
