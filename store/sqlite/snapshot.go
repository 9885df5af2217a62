package sqlite

import (
	"context"
	"database/sql"
	"sync"

	"github.com/memvault/memvault/store/internal/vecindex"
)

// The snapshot (see package vecindex) is kept in store_vector_snapshot,
// one row per part, with its generation in store_vector_quant's
// snapshot_gen: a process that had to read every code (no snapshot, or
// one too old) stores a new one after its search, in its own write
// transaction (maybeSnapshot); a recode or a delete drops it.

// readParts calls use with each part of the snapshot, in order, until it
// returns false. It reads the next part from SQLite while use decodes the
// last (on two cores each half of a first search's load takes about as
// long as the other); the parts pass through two buffers, reused. When it
// returns, the rows are closed and tx is the caller's alone again.
func readParts(ctx context.Context, tx *sql.Tx, use func([]byte) bool) error {
	rs, err := tx.QueryContext(ctx, `SELECT data FROM store_vector_snapshot ORDER BY part`)
	if err != nil {
		return err
	}
	var (
		full    = make(chan []byte, 1)
		free    = make(chan []byte, 2)
		stop    = make(chan struct{})
		halt    = sync.OnceFunc(func() { close(stop) })
		readErr error
	)
	free <- nil
	free <- nil
	go func() {
		// Closing full last tells the caller that the rows are closed and
		// readErr is set.
		defer close(full)
		defer rs.Close()
		for {
			select {
			case <-stop:
				return
			default:
			}
			if !rs.Next() {
				break
			}
			var raw sql.RawBytes
			if readErr = rs.Scan(&raw); readErr != nil {
				return
			}
			var buf []byte
			select {
			case buf = <-free:
			case <-stop:
				return
			}
			select {
			case full <- append(buf[:0], raw...):
			case <-stop:
				return
			}
		}
		readErr = rs.Err()
	}()
	defer func() {
		// Also when use panics: the reader stops, and tx is free again
		// before the panic goes on.
		halt()
		for range full {
		}
	}()
	for p := range full {
		if !use(p) {
			halt()
			break
		}
		free <- p
	}
	// After an early stop the reader may still be running: readErr is
	// its until full is closed, and the deferred drain runs too late for
	// the return value.
	for range full {
	}
	return readErr
}

// maybeSnapshot stores the index as the snapshot when a load asked for
// it, and the coverage of the code rows that a load counted when the
// stored one differs. It is an optimisation of later opens: its failure
// leaves the previous snapshot (or none) and coverage, which loads remain
// correct with, and is not the caller's error.
func (s *Store) maybeSnapshot(ctx context.Context) {
	if r := s.cache.TakeRepair(); r != nil {
		s.repairCoverage(ctx, r)
	}
	gen, parts, ok := s.cache.TakeSnapshot()
	if !ok {
		return
	}
	_ = s.db.Write(ctx, func(tx *sql.Tx) error {
		var cur, codesGen, floor int64
		if err := tx.QueryRowContext(ctx, `SELECT g.gen, q.codes_gen, q.log_floor FROM store_generation g, store_vector_quant q
			WHERE g.id = 0 AND q.id = 0`).Scan(&cur, &codesGen, &floor); err != nil {
			return err
		}
		// Only the current generation is written: an index of an older
		// one could hold an item deleted since, whose delete dropped the
		// snapshot so that its name and code leave the file.
		if codesGen != cur || gen != cur {
			return nil
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM store_vector_snapshot`); err != nil {
			return err
		}
		for i, p := range parts {
			if _, err := tx.ExecContext(ctx, `INSERT INTO store_vector_snapshot (part, data) VALUES (?, ?)`, i, p); err != nil {
				return err
			}
		}
		_, err := tx.ExecContext(ctx, `UPDATE store_vector_quant SET snapshot_gen = ? WHERE id = 0`, gen)
		return err
	})
}

// repairCoverage stores the coverage of the code rows that a load counted
// at generation r.Gen, if that is still the database's generation: a
// build that did not keep it wrote codes. Until then every load of this
// and other processes reads every code row, and this process's index is
// compared with the stored coverage through its skew, which follows.
func (s *Store) repairCoverage(ctx context.Context, r *vecindex.Repair) {
	var done bool
	_ = s.db.Write(ctx, func(tx *sql.Tx) error {
		done = false
		res, err := tx.ExecContext(ctx, `UPDATE store_vector_quant SET code_items = ?, code_sum = ?
			WHERE id = 0 AND codes_gen = ? AND (SELECT gen FROM store_generation WHERE id = 0) = ?`,
			r.Real.Items, int64(r.Real.Sum), r.Gen, r.Gen)
		if err != nil {
			return err
		}
		n, err := res.RowsAffected()
		done = n == 1
		return err
	})
	if !done {
		return
	}
	s.cache.Repaired(r)
}
