package sqlite

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/memvault/memvault/store/internal/indexing"

	"github.com/memvault/memvault/embeddings"
	"github.com/memvault/memvault/store"
)

var _ store.Reembedder = (*Store)(nil)

// Reembed implements store.Reembedder: every stored vector is recomputed
// with to, from the text its item's value yields for the vector's field, in
// primary-key order, a batch per transaction; then to is recorded as the
// store's embedder. Vectors whose text the value no longer yields are
// left as they are and counted in the error.
func (s *Store) Reembed(ctx context.Context, to embeddings.Embedder, opt store.ReembedOptions) (int64, error) {
	if err := s.b.Check(ctx); err != nil {
		return 0, err
	}
	if s.index == nil {
		return 0, fmt.Errorf("sqlite: re-embed: %w", store.ErrNoIndex)
	}
	if err := indexing.CheckReembedTarget(to, s.index.Dims); err != nil {
		return 0, fmt.Errorf("sqlite: %w", err)
	}
	batch := opt.BatchSize
	if batch <= 0 {
		batch = 256
	}
	var total int64
	if err := s.db.Reader().QueryRowContext(ctx, `SELECT count(*) FROM store_vectors`).Scan(&total); err != nil {
		return 0, fmt.Errorf("sqlite: re-embed: %w", err)
	}
	type vec struct{ prefix, key, field, text string }
	var done, lost int64
	var cur [3]string
	for {
		var todo []vec
		rs, err := s.db.Reader().QueryContext(ctx, `SELECT v.prefix, v.key, v.field_name, s.value FROM store_vectors v
JOIN store s ON s.prefix = v.prefix AND s.key = v.key
WHERE (v.prefix, v.key, v.field_name) > (?, ?, ?)
ORDER BY v.prefix, v.key, v.field_name LIMIT ?`, cur[0], cur[1], cur[2], batch)
		if err != nil {
			return done, fmt.Errorf("sqlite: re-embed: %w", err)
		}
		n := 0
		for rs.Next() {
			var v vec
			var raw []byte
			if err := rs.Scan(&v.prefix, &v.key, &v.field, &raw); err != nil {
				rs.Close()
				return done, fmt.Errorf("sqlite: re-embed: %w", err)
			}
			n++
			cur = [3]string{v.prefix, v.key, v.field}
			value, err := s.decodeValue(v.prefix, v.key, raw)
			if err != nil {
				rs.Close()
				return done, fmt.Errorf("sqlite: re-embed %s/%s: %w", v.prefix, v.key, err)
			}
			if t, ok := indexing.ReembedTexts(value, s.index.Fields, v.field); ok {
				v.text = t
				todo = append(todo, v)
			} else {
				lost++
			}
		}
		rs.Close()
		if err := rs.Err(); err != nil {
			return done, fmt.Errorf("sqlite: re-embed: %w", err)
		}
		if n == 0 {
			break
		}
		texts := make([]string, len(todo))
		for i, v := range todo {
			texts[i] = v.text
		}
		vecs, err := indexing.EmbedDocuments(ctx, to, s.index.Dims, texts)
		if err != nil {
			return done, fmt.Errorf("sqlite: re-embed: %w", err)
		}
		err = s.db.Write(ctx, func(tx *sql.Tx) error {
			for i, v := range todo {
				if _, err := tx.ExecContext(ctx, `UPDATE store_vectors SET embedding = ? WHERE prefix = ? AND key = ? AND field_name = ?`,
					encodeVector(vecs[i]), v.prefix, v.key, v.field); err != nil {
					return err
				}
			}
			_, err := s.bumpGeneration(ctx, tx) // other searches reload the vectors
			return err
		})
		if err != nil {
			return done, fmt.Errorf("sqlite: re-embed: %w", err)
		}
		done += int64(n)
		if opt.Progress != nil {
			opt.Progress(done, total)
		}
	}
	if lost > 0 {
		return done, fmt.Errorf("sqlite: re-embed: %d vectors' texts are no longer in their values (re-put those items); the embedder record is unchanged", lost)
	}
	err := s.db.Write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO store_embedder (id, name) VALUES (0, ?) ON CONFLICT (id) DO UPDATE SET name = excluded.name`, to.Name())
		return err
	})
	if err != nil {
		return done, fmt.Errorf("sqlite: re-embed: record embedder: %w", err)
	}
	return done, nil
}
