package pgstore

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/memvault/memvault/store/internal/indexing"
)

// checkEmbedder records the configured embedder's name (with the vector
// spaces of data subjects, when they have their own: items.Config.VectorName)
// and the size of its vectors in memvault_store_embedder (a memvault-only
// table, created by migrations memvault_vector 00 and 01 under the setup
// lock: LangGraph's tables are left as they are) the first time an
// indexed store is set up, and refuses a later Setup with another name or
// another size (store.ErrEmbedderMismatch): vectors of two models, or of
// one model at two sizes, cannot be compared. A record made before sizes
// were recorded (dims NULL), or a store without a record (LangGraph's),
// takes its size from the store_vectors.embedding column, which holds
// vectors of one size only (vector(n), halfvec(n)); the size is then
// written into the record, once, when the Setup is accepted.
func (s *Store) checkEmbedder(ctx context.Context, c Querier) error {
	name := s.b.VectorName(s.embedder().Name())
	dims := s.d.index.dims
	// The column's type modifier is its size (-1: none given): the size
	// of every stored vector, whatever the record says or lacks (a store
	// set up by LangGraph has no record; a record made before sizes has
	// none). Checked before the record is written, so that a refused
	// Setup records nothing.
	var stored int32
	if err := c.QueryRow(ctx, `SELECT COALESCE((SELECT atttypmod FROM pg_attribute WHERE attrelid = to_regclass($1) AND attname = 'embedding' AND NOT attisdropped), -1)`, s.d.t.vectors).Scan(&stored); err != nil {
		return fmt.Errorf("postgres: setup: %w", err)
	}
	if stored > 0 && int(stored) != dims {
		var recorded string
		if err := c.QueryRow(ctx, `SELECT name FROM `+s.d.t.embedder+` WHERE id = 0`).Scan(&recorded); err != nil && !errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("postgres: setup: %w", err)
		}
		return fmt.Errorf("postgres: %w", indexing.CheckEmbedder(recorded, int(stored), name, dims))
	}
	var recorded string
	var recordedDims *int32
	var err error
	// When a concurrent Setup inserts the row first, this statement's
	// INSERT waits for it and then does nothing, while its SELECT still
	// sees the snapshot from before that row: no rows. The next statement
	// sees it.
	for range 3 {
		err = c.QueryRow(ctx, `WITH ins AS (INSERT INTO `+s.d.t.embedder+` (id, name, dims) VALUES (0, $1, $2) ON CONFLICT (id) DO NOTHING RETURNING name, dims)
SELECT name, dims FROM ins UNION ALL SELECT name, dims FROM `+s.d.t.embedder+` WHERE id = 0 LIMIT 1`, name, dims).Scan(&recorded, &recordedDims)
		if !errors.Is(err, pgx.ErrNoRows) {
			break
		}
	}
	if err != nil {
		return fmt.Errorf("postgres: setup: %w", err)
	}
	if recordedDims == nil {
		if err := indexing.CheckEmbedder(recorded, max(int(stored), 0), name, dims); err != nil {
			return fmt.Errorf("postgres: %w", err)
		}
		if _, err := c.Exec(ctx, `UPDATE `+s.d.t.embedder+` SET dims = $1 WHERE id = 0 AND dims IS NULL`, dims); err != nil {
			return fmt.Errorf("postgres: setup: %w", err)
		}
		return nil
	}
	if err := indexing.CheckEmbedder(recorded, int(*recordedDims), name, dims); err != nil {
		return fmt.Errorf("postgres: %w", err)
	}
	return nil
}
