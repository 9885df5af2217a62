package sqlitestore

import (
	"context"
	"database/sql"
	"sync"
)

// The snapshot (see package vecindex) is kept in store_vector_snapshot,
// one row per part, with its generation in store_vector_quant's
// snapshot_gen: a process that had to read every code (no snapshot, or
// one too old) stores a new one after its search, in its own write
// transaction (the engine's maintainIndex, through PutSnapshot); a recode
// or a delete drops it, and the process that deleted stores a new one
// of its index behind the delete (vecindex.Cache.SetSnapshotWriter).

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
