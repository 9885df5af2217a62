package sqlite

import (
	"context"
	"database/sql"

	"github.com/memvault/memvault/store/internal/vecindex"
)

// DefaultVectorCacheBytes is the default Options.VectorCacheBytes.
const DefaultVectorCacheBytes = vecindex.DefaultBytes

// The search index (package vecindex) keeps its data in SQLite: every
// write transaction that changes items bumps store_generation.gen and
// records the items it changed in store_vector_log, writes the codes of
// its vectors to store_vector_codes and keeps their coverage in
// store_vector_quant (codes.go); txSource reads them back in a search's
// read transaction, which sees one generation of all of them.

// readQuantState reads the row of store_vector_quant with the generation,
// as the read transaction tx sees them.
func readQuantState(ctx context.Context, tx *sql.Tx, st *readStmts) (q vecindex.State, err error) {
	var items, sum sql.NullInt64
	err = tx.StmtContext(ctx, st.gen).QueryRowContext(ctx).Scan(&q.Gen, &q.CodesGen, &q.LogFloor, &items, &sum, &q.SnapshotGone)
	q.Stored = scanCoverage(items, sum)
	return q, err
}

// txSource is the index's view of a transaction (vecindex.Source).
type txSource struct{ tx *sql.Tx }

func (s txSource) Quant(ctx context.Context) ([]float32, int64, error) {
	var (
		raw     []byte
		snapGen int64
	)
	if err := s.tx.QueryRowContext(ctx, `SELECT centre, snapshot_gen FROM store_vector_quant WHERE id = 0`).Scan(&raw, &snapGen); err != nil {
		return nil, 0, err
	}
	centre, _ := decodeVector(nil, raw)
	return centre, snapGen, nil
}

func (s txSource) Changed(ctx context.Context, since int64, limit int) (keys []itemKey, full bool, err error) {
	rs, err := s.tx.QueryContext(ctx, `SELECT DISTINCT prefix, key FROM store_vector_log WHERE gen > ? LIMIT ?`, since, limit+1)
	if err != nil {
		return nil, false, err
	}
	defer rs.Close()
	for rs.Next() {
		var ns, key sql.NullString
		if err := rs.Scan(&ns, &key); err != nil {
			return nil, false, err
		}
		if !ns.Valid || !key.Valid || len(keys) == limit {
			return nil, true, nil
		}
		keys = append(keys, itemKey{NS: ns.String, Key: key.String})
	}
	return keys, false, rs.Err()
}

func (s txSource) Codes(ctx context.Context, keys []itemKey, fn func(k itemKey, updated int64, code []byte)) error {
	for start := 0; start < len(keys); start += 200 {
		part := keys[start:min(len(keys), start+200)]
		in, args := keysIn(part)
		rs, err := s.tx.QueryContext(ctx, `SELECT prefix, key, updated_at, code FROM store_vector_codes WHERE `+in, args...)
		if err != nil {
			return err
		}
		for rs.Next() {
			var (
				k   itemKey
				upd int64
				b   sql.RawBytes
			)
			if err := rs.Scan(&k.NS, &k.Key, &upd, &b); err != nil {
				rs.Close()
				return err
			}
			fn(k, upd, b)
		}
		err = rs.Err()
		rs.Close()
		if err != nil {
			return err
		}
	}
	return nil
}

func (s txSource) AllCodes(ctx context.Context, fn func(ns, key []byte, updated int64, code []byte) bool) error {
	// In primary-key order, an item's codes together: WITHOUT ROWID, the
	// scan is that order already, without sorting.
	rs, err := s.tx.QueryContext(ctx, `SELECT prefix, key, updated_at, code FROM store_vector_codes ORDER BY prefix, key, field_name`)
	if err != nil {
		return err
	}
	defer rs.Close()
	var (
		ns, key, b sql.RawBytes
		upd        int64
	)
	for rs.Next() {
		if err := rs.Scan(&ns, &key, &upd, &b); err != nil {
			return err
		}
		if !fn(ns, key, upd, b) {
			return nil
		}
	}
	return rs.Err()
}

func (s txSource) SnapshotSize(ctx context.Context) (int64, error) {
	// length() of a blob reads no content.
	var total int64
	err := s.tx.QueryRowContext(ctx, `SELECT coalesce(sum(length(data)), 0) FROM store_vector_snapshot`).Scan(&total)
	return total, err
}

func (s txSource) SnapshotParts(ctx context.Context, use func([]byte) bool) error {
	return readParts(ctx, s.tx, use)
}

// committed applies a committed transaction's puts, which produced gen at
// time ts, to the search index and the exact copy, in commit order
// (sqlitedb.WriteCommitted); full: it recoded every vector.
func (s *Store) committed(gen int64, puts []*put, ts int64, full bool) {
	if !full && s.cache.Enabled() {
		// Most writes are one item: their changes stay on the stack, as
		// before the index was a package of its own (no allocation per
		// write).
		var buf [4]vecindex.Change
		changes := buf[:0]
		for _, p := range puts {
			changes = append(changes, vecindex.Change{Key: p.k, Codes: p.codes, Deleted: p.encoded == nil})
		}
		s.cache.Committed(gen, changes, ts, full)
	}
	s.floats.committed(gen, puts, ts, full)
}
