package sqlitestore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/memvault/memvault/store/internal/indexing"
	"github.com/memvault/memvault/store/internal/items"
)

// checkEmbedder records the configured embedder's name (with the vector
// spaces of data subjects, when they have their own: items.Config.VectorName)
// and the size of its vectors with the first indexed open of the
// database, and refuses later opens with another name or another size
// (store.ErrEmbedderMismatch): their query vectors could not be compared
// with the stored ones. A record made before sizes were recorded (dims
// NULL) takes its size from a stored vector — every vector of the store
// has the size of the embedder that made it — or, when there is none,
// from the embedder that opens it; the size is then written into the
// record, once, when the open is accepted.
func (s *Store) checkEmbedder(ctx context.Context) error {
	b := items.EngineBase(s.Engine)
	if b.Index == nil {
		return nil
	}
	name := b.VectorName(b.Index.Embedder.Name())
	dims := b.Index.Dims
	var checkErr error
	err := s.db.Write(ctx, func(tx *sql.Tx) error {
		var recorded string
		var recordedDims sql.NullInt64
		err := tx.QueryRowContext(ctx, `SELECT name, dims FROM store_embedder WHERE id = 0`).Scan(&recorded, &recordedDims)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		if recordedDims.Valid {
			checkErr = indexing.CheckEmbedder(recorded, int(recordedDims.Int64), name, dims)
			return nil
		}
		// No record (a database from before it), or one without a size:
		// the stored vectors tell it. Checked before anything is written,
		// so that a refused open records nothing.
		stored, err := storedDims(ctx, tx)
		if err != nil {
			return err
		}
		if checkErr = indexing.CheckEmbedder(recorded, stored, name, dims); checkErr != nil {
			return nil
		}
		if _, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO store_embedder (id, name, dims) VALUES (0, ?, ?)`, name, dims); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `UPDATE store_embedder SET dims = ? WHERE id = 0 AND dims IS NULL`, dims)
		return err
	})
	if err != nil {
		return fmt.Errorf("sqlite: setup: %w", err)
	}
	if checkErr != nil {
		return fmt.Errorf("sqlite: %w", checkErr)
	}
	return nil
}

// storedDims is the size of the store's vectors, read from one of them
// (little-endian float32s: 4 bytes a dimension), or 0 when it holds none.
func storedDims(ctx context.Context, tx *sql.Tx) (int, error) {
	var n int64
	err := tx.QueryRowContext(ctx, `SELECT length(embedding) FROM store_vectors WHERE embedding IS NOT NULL LIMIT 1`).Scan(&n)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	return int(n / 4), nil
}
