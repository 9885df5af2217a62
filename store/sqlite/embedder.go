package sqlite

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/memvault/memvault/store/internal/indexing"
)

// checkEmbedder records the configured embedder's name (with the vector
// spaces of data subjects, when they have their own: items.Config.VectorName)
// with the first indexed open of the database, and refuses later opens
// with another one (store.ErrEmbedderMismatch): their query vectors could
// not be compared with the stored ones.
func (s *Store) checkEmbedder(ctx context.Context) error {
	if s.index == nil {
		return nil
	}
	name := s.b.VectorName(s.index.Embedder.Name())
	var recorded string
	err := s.db.Write(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO store_embedder (id, name) VALUES (0, ?)`, name); err != nil {
			return err
		}
		return tx.QueryRowContext(ctx, `SELECT name FROM store_embedder WHERE id = 0`).Scan(&recorded)
	})
	if err != nil {
		return fmt.Errorf("sqlite: setup: %w", err)
	}
	if err := indexing.CheckEmbedder(recorded, name); err != nil {
		return fmt.Errorf("sqlite: %w", err)
	}
	return nil
}
