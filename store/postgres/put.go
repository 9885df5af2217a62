package postgres

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/memvault/memvault/internal/binding"
	"github.com/memvault/memvault/internal/pgfence"
	"github.com/memvault/memvault/internal/pgretry"
	"github.com/memvault/memvault/store"
	"github.com/memvault/memvault/store/internal/items"
)

// Put creates or replaces an item (see store.Store). The item, its TTL and
// its vectors are written in one transaction, in one round trip.
func (s *Store) Put(ctx context.Context, ns store.Namespace, key string, value map[string]any, opts ...store.PutOption) error {
	if value == nil {
		return fmt.Errorf("%w: nil value (use Delete)", store.ErrInvalidArgument)
	}
	return s.put(ctx, s.db, []store.PutOp{{Namespace: ns, Key: key, Value: value, Options: items.ResolvePut(opts)}})
}

// PutTx is Put inside the caller's transaction, so a memory commits or rolls
// back with the caller's own rows.
func (s *Store) PutTx(ctx context.Context, tx pgx.Tx, ns store.Namespace, key string, value map[string]any, opts ...store.PutOption) error {
	if value == nil {
		return fmt.Errorf("%w: nil value (use DeleteTx)", store.ErrInvalidArgument)
	}
	return s.put(ctx, tx, []store.PutOp{{Namespace: ns, Key: key, Value: value, Options: items.ResolvePut(opts)}})
}

// Delete removes an item and its vectors.
func (s *Store) Delete(ctx context.Context, ns store.Namespace, key string) error {
	return s.put(ctx, s.db, []store.PutOp{{Namespace: ns, Key: key}})
}

// DeleteTx is Delete inside the caller's transaction.
func (s *Store) DeleteTx(ctx context.Context, tx pgx.Tx, ns store.Namespace, key string) error {
	return s.put(ctx, tx, []store.PutOp{{Namespace: ns, Key: key}})
}

// PutBatchTx writes several puts and deletes (PutOp with a nil Value)
// inside the caller's transaction; of several ops on one key the last wins.
func (s *Store) PutBatchTx(ctx context.Context, tx pgx.Tx, ops []store.PutOp) error {
	return s.put(ctx, tx, ops)
}

// put writes ops (deletes for nil values) in one pgx batch: one round trip,
// atomic (a batch runs in an implicit transaction, or in q's transaction).
// The texts of all items are embedded in one EmbedDocuments call first.
func (s *Store) put(ctx context.Context, q Querier, ops []store.PutOp) error {
	r, vecs, now, err := s.preparePuts(ctx, ops)
	if err != nil {
		return err
	}
	return s.write(ctx, q, r, vecs, now)
}

// write sends prepared puts on q, vectors in pgvector's binary format
// where the connection has it registered.
func (s *Store) write(ctx context.Context, q Querier, r *putRows, vecs [][]float32, now time.Time) error {
	owned := q == Querier(s.db)
	if len(r.up.key) >= s.copyMin {
		if done, err := s.writeBulk(ctx, q, owned, r, vecs, now); done {
			return err
		}
	}
	if len(vecs) == 0 {
		return s.sendPuts(ctx, q, owned, r, nil, false, now)
	}
	return vectorConn(ctx, q, func(vq Querier, binary bool) error {
		return s.sendPuts(ctx, vq, owned, r, vecs, binary, now)
	})
}

// preparePuts validates ops, encodes (and seals) their values and embeds
// their index texts: everything a put does before it talks to PostgreSQL.
func (s *Store) preparePuts(ctx context.Context, ops []store.PutOp) (r *putRows, vecs [][]float32, now time.Time, err error) {
	if err := s.b.Check(ctx); err != nil {
		return nil, nil, now, err
	}
	puts, err := s.itemsConfig().PreparePuts(ctx, ops)
	if err != nil {
		return nil, nil, now, err
	}
	return s.encodePuts(ctx, puts)
}

// encodePuts encodes (and seals) prepared puts into the columns of a put's
// statements.
func (s *Store) encodePuts(ctx context.Context, puts []*items.Put) (r *putRows, vecs [][]float32, now time.Time, err error) {
	// Rows in key order: two batches putting the same keys in opposite
	// orders would otherwise each lock a row the other waits for.
	slices.SortFunc(puts, func(a, b *items.Put) int {
		return cmp.Or(strings.Compare(a.Prefix, b.Prefix), strings.Compare(a.Key, b.Key))
	})
	now = s.nowUTC()

	r = &putRows{}
	for _, p := range puts {
		if p.Value == nil {
			r.del.prefix = append(r.del.prefix, p.Prefix)
			r.del.key = append(r.del.key, p.Key)
			continue
		}
		raw, err := s.encodeValue(ctx, p.Prefix, p.Key, p.Value, &r.fence)
		if err != nil {
			return nil, nil, now, err
		}
		r.up.prefix = append(r.up.prefix, p.Prefix)
		r.up.key = append(r.up.key, p.Key)
		r.up.value = append(r.up.value, raw)
		if p.TTL > 0 {
			e := now.Add(p.TTL)
			m := int32(items.TTLMinutes(p.TTL))
			r.exp, r.ttlM = append(r.exp, &e), append(r.ttlM, &m)
		} else {
			r.exp, r.ttlM = append(r.exp, nil), append(r.ttlM, nil)
		}
		r.up.reindex = append(r.up.reindex, p.Reindex)
		if !p.Reindex {
			continue // no store_vectors table: index options are moot
		}
		r.reidx.prefix = append(r.reidx.prefix, p.Prefix)
		r.reidx.key = append(r.reidx.key, p.Key)
		for _, ft := range p.Texts {
			r.vec.prefix = append(r.vec.prefix, p.Prefix)
			r.vec.key = append(r.vec.key, p.Key)
			r.vec.field = append(r.vec.field, ft.Field)
		}
		vecs = append(vecs, p.Vectors...)
	}
	return r, vecs, now, nil
}

// putRows are the columns of one put's statements.
type putRows struct {
	del struct{ prefix, key []string }
	up  struct {
		prefix, key, value []string
		reindex            []bool // the item's vectors are replaced (reidx holds it too)
	}
	exp   []*time.Time
	ttlM  []*int32
	reidx struct{ prefix, key []string }
	vec   struct{ prefix, key, field []string } // one per vector in vecs
	fence binding.Fence                         // the keys that sealed the values
}

// sendPuts sends a put's statements as one batch (one implicit
// transaction) on q. owned says q is the store's own pool, whose aborted
// batches are retried; vectors go in binary when binary is set.
func (s *Store) sendPuts(ctx context.Context, q Querier, owned bool, r *putRows, vecs [][]float32, binary bool, now time.Time) error {

	b := &pgx.Batch{}
	inSQL := pgfence.Queue(s.codec, b, &r.fence)
	if len(r.del.key) > 0 {
		b.Queue(`DELETE FROM `+s.t.store+` s USING unnest($1::text[], $2::text[]) AS d(prefix, key)
WHERE s.prefix = d.prefix AND s.key = d.key`, r.del.prefix, r.del.key)
	}
	if len(r.up.key) > 0 {
		b.Queue(`INSERT INTO `+s.t.store+` AS s (prefix, key, value, created_at, updated_at, expires_at, ttl_minutes)
SELECT u.prefix, u.key, u.value::jsonb, $4, $4, u.expires_at, u.ttl_minutes
FROM unnest($1::text[], $2::text[], $3::text[], $5::timestamptz[], $6::int[]) AS u(prefix, key, value, expires_at, ttl_minutes)
ON CONFLICT (prefix, key) DO UPDATE SET
    value = EXCLUDED.value,
    -- A write always moves updated_at forward, even within one clock
    -- tick, so that it names a version (store.PutCondition).
    updated_at = GREATEST(EXCLUDED.updated_at, s.updated_at + interval '1 microsecond'),
    expires_at = EXCLUDED.expires_at,
    ttl_minutes = EXCLUDED.ttl_minutes`, r.up.prefix, r.up.key, r.up.value, now, r.exp, r.ttlM)
	}
	s.queueVectors(b, r, vecs, binary, now)
	if b.Len() == 0 {
		return nil
	}
	send := func() error { return q.SendBatch(ctx, b).Close() }
	if !inSQL {
		begin, ok := q.(pgfence.Beginner)
		if !ok {
			return fmt.Errorf("postgres: put: %T cannot begin the transaction that fences the put", q)
		}
		send = func() error {
			return pgfence.InTx(ctx, s.codec, begin, &r.fence, func(tx pgx.Tx) error { return tx.SendBatch(ctx, b).Close() })
		}
	}
	var err error
	if owned {
		// The store's own implicit transaction: run it again when
		// PostgreSQL aborted it to break a deadlock or a serialization
		// conflict. A caller's transaction (PutTx) is the caller's to retry.
		err = pgretry.Do(ctx, send)
	} else {
		err = send()
	}
	if err != nil {
		return fmt.Errorf("postgres: put: %w", binding.FenceErr(err))
	}
	if s.values != nil {
		// Not needed for correctness (entries are checked against the row),
		// but frees memory held for replaced values.
		for i := range r.del.key {
			s.values.c.Remove(itemKey{r.del.prefix[i], r.del.key[i]})
		}
	}
	return nil
}

// queueVectors queues the vector statements of a put: the vectors of
// fields an item no longer embeds go, the new ones are upserted.
func (s *Store) queueVectors(b *pgx.Batch, r *putRows, vecs [][]float32, binary bool, now time.Time) {
	if len(r.reidx.key) > 0 {
		// Vectors of fields the item no longer has (or all of them, for
		// WithoutIndex) go; LangGraph leaves them behind, stale.
		b.Queue(`DELETE FROM `+s.t.vectors+` v USING unnest($1::text[], $2::text[]) AS r(prefix, key)
WHERE v.prefix = r.prefix AND v.key = r.key
  AND NOT EXISTS (
    SELECT 1 FROM unnest($3::text[], $4::text[], $5::text[]) AS n(prefix, key, field_name)
    WHERE n.prefix = v.prefix AND n.key = v.key AND n.field_name = v.field_name)`,
			r.reidx.prefix, r.reidx.key, r.vec.prefix, r.vec.key, r.vec.field)
	}
	if len(vecs) > 0 {
		embs, arrayType := s.vectorBatch(binary, vecs)
		b.Queue(`INSERT INTO `+s.t.vectors+` (prefix, key, field_name, embedding, created_at, updated_at)
SELECT n.prefix, n.key, n.field_name, n.embedding::`+s.index.vecType+`, $5, $5
FROM unnest($1::text[], $2::text[], $3::text[], $4::`+arrayType+`) AS n(prefix, key, field_name, embedding)
ON CONFLICT (prefix, key, field_name) DO UPDATE SET
    embedding = EXCLUDED.embedding,
    updated_at = EXCLUDED.updated_at`, r.vec.prefix, r.vec.key, r.vec.field, embs, now)
	}
}

// itemsConfig is the store core's view of the store's options.
func (s *Store) itemsConfig() items.Config {
	return s.b.Config
}

// DrainWrites returns once every put that may have found a destroyed key
// live has committed or failed (pgfence.Drain): an erasure calls it after
// destroying a subject's keys, before it deletes the subject's items.
func (s *Store) DrainWrites(ctx context.Context) error {
	if err := pgfence.Drain(ctx, s.codec, s.db); err != nil {
		return fmt.Errorf("postgres: %w", err)
	}
	return nil
}
