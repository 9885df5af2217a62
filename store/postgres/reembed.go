package postgres

import (
	"context"
	"fmt"

	"github.com/memvault/memvault/store/internal/indexing"

	"github.com/memvault/memvault/embeddings"
	"github.com/memvault/memvault/store"
)

var _ store.Reembedder = (*Store)(nil)

// Reembed implements store.Reembedder: every stored vector is recomputed
// with to, from the text its item's value yields for the vector's field, in
// primary-key order, one UPDATE per batch; then to is recorded in
// memvault_store_embedder. Vectors whose text the value no longer yields
// are left as they are and counted in the error.
func (s *Store) Reembed(ctx context.Context, to embeddings.Embedder, opt store.ReembedOptions) (int64, error) {
	if err := s.b.Check(ctx); err != nil {
		return 0, err
	}
	if s.index == nil {
		return 0, fmt.Errorf("postgres: re-embed: %w", store.ErrNoIndex)
	}
	if err := indexing.CheckReembedTarget(to, s.index.dims); err != nil {
		return 0, fmt.Errorf("postgres: %w", err)
	}
	batch := opt.BatchSize
	if batch <= 0 {
		batch = 256
	}
	var total int64
	if err := s.db.QueryRow(ctx, `SELECT count(*) FROM `+s.t.vectors).Scan(&total); err != nil {
		return 0, fmt.Errorf("postgres: re-embed: %w", err)
	}
	var done, lost int64
	var cur [3]string
	for {
		rows, err := s.db.Query(ctx, `SELECT v.prefix, v.key, v.field_name, s.value FROM `+s.t.vectors+` v
JOIN `+s.t.store+` s ON s.prefix = v.prefix AND s.key = v.key
WHERE (v.prefix, v.key, v.field_name) > ($1, $2, $3)
ORDER BY v.prefix, v.key, v.field_name LIMIT $4`, cur[0], cur[1], cur[2], batch)
		if err != nil {
			return done, fmt.Errorf("postgres: re-embed: %w", err)
		}
		var prefixes, keys, fields, texts []string
		n := 0
		for rows.Next() {
			var prefix, key, field string
			var raw []byte
			if err := rows.Scan(&prefix, &key, &field, &raw); err != nil {
				rows.Close()
				return done, fmt.Errorf("postgres: re-embed: %w", err)
			}
			n++
			cur = [3]string{prefix, key, field}
			value, err := s.decodeValueUncached(prefix, key, raw)
			if err != nil {
				rows.Close()
				return done, fmt.Errorf("postgres: re-embed %s/%s: %w", prefix, key, err)
			}
			t, ok := indexing.ReembedTexts(value, s.index.cfg.Fields, field)
			if !ok {
				lost++
				continue
			}
			prefixes, keys, fields, texts = append(prefixes, prefix), append(keys, key), append(fields, field), append(texts, t)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return done, fmt.Errorf("postgres: re-embed: %w", err)
		}
		if n == 0 {
			break
		}
		vecs, err := indexing.EmbedDocuments(ctx, to, s.index.dims, texts)
		if err != nil {
			return done, fmt.Errorf("postgres: re-embed: %w", err)
		}
		err = vectorConn(ctx, s.db, func(q Querier, binary bool) error {
			embs, arrayType := s.vectorBatch(binary, vecs)
			_, err := q.Exec(ctx, `UPDATE `+s.t.vectors+` v SET embedding = u.e::`+s.index.vecType+`
FROM unnest($1::text[], $2::text[], $3::text[], $4::`+arrayType+`) AS u(p, k, f, e)
WHERE v.prefix = u.p AND v.key = u.k AND v.field_name = u.f`, prefixes, keys, fields, embs)
			return err
		})
		if err != nil {
			return done, fmt.Errorf("postgres: re-embed: %w", err)
		}
		done += int64(n)
		if opt.Progress != nil {
			opt.Progress(done, total)
		}
	}
	if lost > 0 {
		return done, fmt.Errorf("postgres: re-embed: %d vectors' texts are no longer in their values (re-put those items); the embedder record is unchanged", lost)
	}
	if _, err := s.db.Exec(ctx, `INSERT INTO `+s.t.embedder+` (id, name) VALUES (0, $1) ON CONFLICT (id) DO UPDATE SET name = excluded.name`, to.Name()); err != nil {
		return done, fmt.Errorf("postgres: re-embed: record embedder: %w", err)
	}
	return done, nil
}
