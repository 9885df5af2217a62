package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/memvault/memvault/store/internal/indexing"
)

// checkEmbedder records the configured embedder's name (with the vector
// spaces of data subjects, when they have their own: items.Config.VectorName)
// in memvault_store_embedder (a memvault-only table, created by migration
// memvault_vector 00: LangGraph's tables are left as they are) the first
// time an indexed store is set up, and refuses a later Setup with another
// embedder (store.ErrEmbedderMismatch): vectors of two models, or of one
// model at two sizes, cannot be compared.
func (s *Store) checkEmbedder(ctx context.Context, c Querier) error {
	name := s.b.VectorName(s.embedder().Name())
	var recorded string
	var err error
	// When a concurrent Setup inserts the row first, this statement's
	// INSERT waits for it and then does nothing, while its SELECT still
	// sees the snapshot from before that row: no rows. The next statement
	// sees it.
	for range 3 {
		err = c.QueryRow(ctx, `WITH ins AS (INSERT INTO `+s.t.embedder+` (id, name) VALUES (0, $1) ON CONFLICT (id) DO NOTHING RETURNING name)
SELECT name FROM ins UNION ALL SELECT name FROM `+s.t.embedder+` WHERE id = 0 LIMIT 1`, name).Scan(&recorded)
		if !errors.Is(err, pgx.ErrNoRows) {
			break
		}
	}
	if err != nil {
		return fmt.Errorf("postgres: setup: %w", err)
	}
	if err := indexing.CheckEmbedder(recorded, name); err != nil {
		return fmt.Errorf("postgres: %w", err)
	}
	return nil
}
