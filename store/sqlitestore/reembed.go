package sqlitestore

import (
	"context"
	"database/sql"

	"github.com/memvault/memvault/embeddings"
	"github.com/memvault/memvault/store"
	"github.com/memvault/memvault/store/engine"
	"github.com/memvault/memvault/store/internal/items"
	"github.com/memvault/memvault/store/vecindex"
)

// Reembed implements store.Reembedder: every stored vector is recomputed
// with to, from the text its item's value yields for the vector's field, in
// primary-key order, a batch per transaction; then to is recorded as the
// store's embedder. Vectors whose text the value no longer yields are
// left as they are and counted in the error.
func (s *Store) Reembed(ctx context.Context, to embeddings.Embedder, opt store.ReembedOptions) (int64, error) {
	r := s.db.Reader()
	return items.EngineBase(s.Engine).Reembed(ctx, items.Vectors{
		Count: func(ctx context.Context) (n int64, err error) {
			err = r.QueryRowContext(ctx, `SELECT count(*) FROM store_vectors`).Scan(&n)
			return n, err
		},
		Page: func(ctx context.Context, after [3]string, limit int) ([]items.StoredVector, error) {
			rs, err := r.QueryContext(ctx, `SELECT v.prefix, v.key, v.field_name, s.value FROM store_vectors v
JOIN store s ON s.prefix = v.prefix AND s.key = v.key
WHERE (v.prefix, v.key, v.field_name) > (?, ?, ?)
ORDER BY v.prefix, v.key, v.field_name LIMIT ?`, after[0], after[1], after[2], limit)
			if err != nil {
				return nil, err
			}
			defer rs.Close()
			var page []items.StoredVector
			for rs.Next() {
				var sv items.StoredVector
				if err := rs.Scan(&sv.Prefix, &sv.Key, &sv.Field, &sv.Raw); err != nil {
					return nil, err
				}
				page = append(page, sv)
			}
			return page, rs.Err()
		},
		Decode: engine.Decoder(s.Engine),
		Write: func(ctx context.Context, updates []items.VectorUpdate) error {
			dt, err := s.d.Begin(ctx, true)
			if err != nil {
				return err
			}
			t := dt.(*tx)
			err = s.reembedWrite(ctx, t, updates)
			if err != nil {
				_ = t.Rollback()
				return err
			}
			return t.Commit() // bumps: other searches refresh these items
		},
		Record: func(ctx context.Context, name string) error {
			return s.db.Write(ctx, func(tx *sql.Tx) error {
				_, err := tx.ExecContext(ctx, `INSERT INTO store_embedder (id, name, dims) VALUES (0, ?, ?) ON CONFLICT (id) DO UPDATE SET name = excluded.name, dims = excluded.dims`, name, to.Dims())
				return err
			})
		},
	}, to, opt)
}

// reembedWrite replaces the vectors of updates, with their codes, in t.
func (s *Store) reembedWrite(ctx context.Context, t *tx, updates []items.VectorUpdate) error {
	cw, err := t.codeWrite(ctx)
	if err != nil {
		return err
	}
	for _, u := range updates {
		if _, err := t.ExecContext(ctx, `UPDATE store_vectors SET embedding = ? WHERE prefix = ? AND key = ? AND field_name = ?`,
			encodeVector(u.Vector), u.Prefix, u.Key, u.Field); err != nil {
			return err
		}
		// The code of the new vector, with the vector's updated_at; an
		// item that had no code row (its vectors unreadable) joins the
		// codes' coverage.
		var had bool
		if err := t.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM store_vector_codes WHERE prefix = ? AND key = ?)`,
			u.Prefix, u.Key).Scan(&had); err != nil {
			return err
		}
		n, err := t.putCode(ctx, t.d.st.reembedCode, vecindex.EncodeCode(u.Vector, cw.centre), u.Prefix, u.Key, u.Field)
		if err != nil {
			return err
		}
		k := store.RowKey{NS: u.Prefix, Key: u.Key}
		if n > 0 && !had {
			cw.cov.Cov.Add(vecindex.ItemHash(k))
		}
		cw.keys = append(cw.keys, k)
	}
	return nil
}
