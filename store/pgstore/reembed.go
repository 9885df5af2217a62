package pgstore

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/memvault/memvault/embeddings"
	"github.com/memvault/memvault/store"
	"github.com/memvault/memvault/store/internal/items"
)

// Reembed implements store.Reembedder: every stored vector is recomputed
// with to, from the text its item's value yields for the vector's field, in
// primary-key order, one UPDATE per batch; then to is recorded in
// memvault_store_embedder. Vectors whose text the value no longer yields
// are left as they are and counted in the error.
func (s *Store) Reembed(ctx context.Context, to embeddings.Embedder, opt store.ReembedOptions) (int64, error) {
	return s.b.Reembed(ctx, items.Vectors{
		Count: func(ctx context.Context) (n int64, err error) {
			err = s.d.db.QueryRow(ctx, `SELECT count(*) FROM `+s.d.t.vectors).Scan(&n)
			return n, err
		},
		Page: func(ctx context.Context, after [3]string, limit int) ([]items.StoredVector, error) {
			rows, err := s.d.db.Query(ctx, `SELECT v.prefix, v.key, v.field_name, s.value FROM `+s.d.t.vectors+` v
JOIN `+s.d.t.store+` s ON s.prefix = v.prefix AND s.key = v.key
WHERE (v.prefix, v.key, v.field_name) > ($1, $2, $3)
ORDER BY v.prefix, v.key, v.field_name LIMIT $4`, after[0], after[1], after[2], limit)
			if err != nil {
				return nil, err
			}
			return pgx.CollectRows(rows, pgx.RowToStructByPos[items.StoredVector])
		},
		Decode: s.decodeValue,
		Write: func(ctx context.Context, updates []items.VectorUpdate) error {
			prefixes, keys, fields := make([]string, len(updates)), make([]string, len(updates)), make([]string, len(updates))
			vecs := make([][]float32, len(updates))
			for i, u := range updates {
				prefixes[i], keys[i], fields[i], vecs[i] = u.Prefix, u.Key, u.Field, u.Vector
			}
			s.d.topo.Distributed(ctx, s.d.db) // for ShardFilter
			return vectorConn(ctx, s.d.db, func(q Querier, binary bool) error {
				embs, arrayType := s.d.vectorBatch(binary, vecs)
				_, err := q.Exec(ctx, `UPDATE `+s.d.t.vectors+` v SET embedding = u.e::`+s.d.index.vecType+`
FROM unnest($1::text[], $2::text[], $3::text[], $4::`+arrayType+`) AS u(p, k, f, e)
WHERE v.prefix = u.p AND v.key = u.k AND v.field_name = u.f`+s.d.topo.ShardFilter("v.prefix", "$1::text[]"), prefixes, keys, fields, embs)
				return err
			})
		},
		Record: func(ctx context.Context, name string) error {
			_, err := s.d.db.Exec(ctx, `INSERT INTO `+s.d.t.embedder+` (id, name, dims) VALUES (0, $1, $2) ON CONFLICT (id) DO UPDATE SET name = excluded.name, dims = excluded.dims`, name, to.Dims())
			return err
		},
	}, to, opt)
}
