package sqlite

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/memvault/memvault/store"
	"github.com/memvault/memvault/store/internal/vecindex"
)

const (
	// logKeep is how many generations store_vector_log keeps, or back to
	// the snapshot's (see snapshot.go) but at most logKeepMax: a process
	// further behind reloads every code.
	logKeep    = 512
	logKeepMax = 16384
	// maxLogItems bounds the log rows of one transaction: one that changes
	// more items logs a full marker, after which others reload every code
	// (which then costs about as much as reading the changed ones).
	maxLogItems = 1024
	// centreMin is how many vectors the centre is computed from once
	// there are that many: until then codes are uncentred.
	centreMin = 1024
	// centreSample bounds the vectors read to compute the centre.
	centreSample = 4096
)

// codeWrite is a write transaction's bookkeeping of the search index.
type codeWrite struct {
	prevGen  int64     // the generation before this transaction
	codesGen int64     // the codes' generation before it
	centre   []float32 // the centre to code with (nil: none)
	keys     []itemKey // items changed
	vectors  bool      // some vector was written
	full     bool      // every code changed: log a full marker
	// deleted: some item went. The snapshot, which would keep its
	// namespace, key and code in the file, is dropped (secure_delete
	// zeroes its pages); the next load that reads every code writes a
	// new one.
	deleted bool
	// forget purges the log rows naming items under this namespace and
	// logs a full marker instead (DeletePrefix: what an erasure deletes
	// leaves no name behind in the log either).
	forget store.Namespace
	// cov is the coverage of the items with code rows (see coverage.go),
	// kept as the transaction writes and deletes codes, stored by
	// finishCodes.
	cov storedCoverage
}

// beginCodes reads what a write transaction needs to keep the codes.
func (s *Store) beginCodes(ctx context.Context, tx *sql.Tx) (*codeWrite, error) {
	w := &codeWrite{}
	var (
		raw        []byte
		items, sum sql.NullInt64
	)
	if err := tx.StmtContext(ctx, s.st.quant).QueryRowContext(ctx).Scan(&w.prevGen, &w.codesGen, &raw, &items, &sum); err != nil {
		return nil, err
	}
	w.cov = scanCoverage(items, sum)
	if len(raw) > 0 {
		w.centre, _ = decodeVector(nil, raw)
	}
	return w, nil
}

// finishCodes bumps the generation, logs the changed items, trims the log,
// advances the codes' generation (when they were complete) and, once there
// are enough vectors to centre codes and the store has no centre yet,
// recodes every vector around their mean. It returns the new generation.
func (s *Store) finishCodes(ctx context.Context, tx *sql.Tx, w *codeWrite) (int64, error) {
	var gen int64
	if err := tx.StmtContext(ctx, s.st.bump).QueryRowContext(ctx).Scan(&gen); err != nil {
		return 0, err
	}
	current := w.codesGen == w.prevGen
	if current && w.vectors && s.index != nil && vecindex.CentreOf(w.centre, s.index.Dims) == nil {
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM store_vector_codes`).Scan(&n); err != nil {
			return 0, err
		}
		if n >= centreMin {
			cov, err := s.recode(ctx, tx, gen)
			if err != nil {
				return 0, err
			}
			w.full = true
			w.cov = storedCoverage{Cov: cov, Known: true}
		}
	}
	if w.deleted {
		if _, err := tx.ExecContext(ctx, `DELETE FROM store_vector_snapshot`); err != nil {
			return 0, err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE store_vector_quant SET snapshot_gen = -1 WHERE id = 0`); err != nil {
			return 0, err
		}
	}
	if len(w.forget) > 0 {
		cond, args := prefixCond("prefix", w.forget)
		if _, err := tx.ExecContext(ctx, `DELETE FROM store_vector_log WHERE `+cond, args...); err != nil {
			return 0, err
		}
		w.full = true
	}
	log := tx.StmtContext(ctx, s.st.insLog)
	if w.full || len(w.keys) > maxLogItems {
		w.full = true
		if _, err := log.ExecContext(ctx, gen, nil, nil); err != nil {
			return 0, err
		}
	} else {
		for _, k := range w.keys {
			if _, err := log.ExecContext(ctx, gen, k.NS, k.Key); err != nil {
				return 0, err
			}
		}
	}
	items, sum := coverageArgs(w.cov)
	if _, err := tx.StmtContext(ctx, s.st.setQuant).ExecContext(ctx, w.prevGen, gen, gen-logKeep, gen-logKeepMax, items, sum); err != nil {
		return 0, err
	}
	if _, err := tx.StmtContext(ctx, s.st.trimLog).ExecContext(ctx); err != nil {
		return 0, err
	}
	return gen, nil
}

// putCodes writes the codes of an item's vectors (replacing its old ones)
// and keeps them in p for the index of this process.
func (s *Store) putCodes(ctx context.Context, tx *sql.Tx, w *codeWrite, p *put, ts int64) error {
	p.codes = p.codes[:0]
	w.keys = append(w.keys, p.k)
	res, err := tx.StmtContext(ctx, s.st.delCodes).ExecContext(ctx, p.k.NS, p.k.Key)
	if err != nil {
		return err
	}
	n, err := res.RowsAffected()
	if err != nil {
		return err
	}
	h := itemHash(p.k)
	if n > 0 {
		w.cov.Cov.Sub(h)
	}
	if p.encoded == nil {
		w.deleted = true
		return nil
	}
	if len(p.Vectors) > 0 {
		w.cov.Cov.Add(h)
	}
	var ins *sql.Stmt
	for i, v := range p.Vectors {
		if ins == nil {
			ins = tx.StmtContext(ctx, s.st.insCode)
		}
		b := vecindex.EncodeCode(v, w.centre)
		if _, err := ins.ExecContext(ctx, p.k.NS, p.k.Key, p.Texts[i].Field, ts, b); err != nil {
			return err
		}
		p.codes = append(p.codes, b)
		w.vectors = true
	}
	return nil
}

// recode rewrites every code in tx, centred on the mean of (a sample of)
// the vectors of the index's dimensions when there are centreMin of them,
// and records that the codes are complete for generation gen, with their
// coverage, which it returns.
func (s *Store) recode(ctx context.Context, tx *sql.Tx, gen int64) (coverage, error) {
	var cov coverage
	dims := s.index.Dims
	var (
		sum  = make([]float64, dims)
		n    int
		buf  []float32
		raw  []byte
		more = true
	)
	rs, err := tx.QueryContext(ctx, `SELECT embedding FROM store_vectors LIMIT ?`, centreSample)
	if err != nil {
		return cov, err
	}
	for rs.Next() {
		if err := rs.Scan(&raw); err != nil {
			rs.Close()
			return cov, err
		}
		var ok bool
		if buf, ok = decodeVector(buf, raw); ok && len(buf) == dims {
			for i, x := range buf {
				sum[i] += float64(x)
			}
			n++
		}
	}
	rs.Close()
	if err := rs.Err(); err != nil {
		return cov, err
	}
	var centre []float32
	if n >= centreMin {
		centre = make([]float32, dims)
		for i := range centre {
			centre[i] = float32(sum[i] / float64(n))
		}
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM store_vector_codes`); err != nil {
		return cov, err
	}
	ins, err := tx.PrepareContext(ctx, `INSERT OR REPLACE INTO store_vector_codes (prefix, key, field_name, updated_at, code) VALUES (?, ?, ?, ?, ?)`)
	if err != nil {
		return cov, err
	}
	defer ins.Close()
	type row struct {
		ns, key, field string
		upd            int64
		code           []byte
	}
	var (
		after [3]string
		last  itemKey
	)
	for first := true; more; first = false {
		// Pages keep the statement and the inserts apart.
		cond, args := `(prefix, key, field_name) > (?, ?, ?)`, []any{after[0], after[1], after[2]}
		if first {
			cond, args = "1", nil
		}
		q := `SELECT prefix, key, field_name, updated_at, embedding FROM store_vectors
			WHERE ` + cond + ` ORDER BY prefix, key, field_name LIMIT 256`
		rs, err := tx.QueryContext(ctx, q, args...)
		if err != nil {
			return cov, err
		}
		var page []row
		for rs.Next() {
			var r row
			if err := rs.Scan(&r.ns, &r.key, &r.field, &r.upd, &raw); err != nil {
				rs.Close()
				return cov, err
			}
			var ok bool
			if buf, ok = decodeVector(buf, raw); ok {
				r.code = vecindex.EncodeCode(buf, centre)
			}
			page = append(page, r)
		}
		rs.Close()
		if err := rs.Err(); err != nil {
			return cov, err
		}
		more = len(page) == 256
		for _, r := range page {
			after = [3]string{r.ns, r.key, r.field}
			if r.code == nil {
				continue
			}
			if _, err := ins.ExecContext(ctx, r.ns, r.key, r.field, r.upd, r.code); err != nil {
				return cov, err
			}
			if k := (itemKey{NS: r.ns, Key: r.key}); cov.Items == 0 || k != last {
				cov.Add(itemHash(k))
				last = k
			}
		}
	}
	var c any
	if centre != nil {
		c = encodeVector(centre)
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM store_vector_snapshot`); err != nil {
		return cov, err
	}
	_, err = tx.ExecContext(ctx, `UPDATE store_vector_quant SET centre = ?, codes_gen = ?, snapshot_gen = -1,
		code_items = ?, code_sum = ? WHERE id = 0`, c, gen, cov.Items, int64(cov.Sum))
	return cov, err
}

// syncCodes recodes every vector when the codes are not complete for the
// database's generation: on the first Open after the upgrade that added
// them, or after a build without them wrote items. Searches scan SQLite
// exactly until then. When only the codes' coverage is missing (the
// first Open after the upgrade that added it), it counts it.
func (s *Store) syncCodes(ctx context.Context) error {
	if s.index == nil {
		return nil
	}
	var (
		gen, codesGen int64
		known         bool
	)
	if err := s.db.Reader().QueryRowContext(ctx, `SELECT g.gen, q.codes_gen, q.code_items IS NOT NULL AND q.code_sum IS NOT NULL
		FROM store_generation g, store_vector_quant q WHERE g.id = 0 AND q.id = 0`).Scan(&gen, &codesGen, &known); err != nil {
		return err
	}
	if gen == codesGen && known {
		return nil
	}
	err := s.db.Write(ctx, func(tx *sql.Tx) error {
		w, err := s.beginCodes(ctx, tx)
		if err != nil {
			return err
		}
		if w.codesGen == w.prevGen {
			if w.cov.Known {
				return nil // another process did it
			}
			// The codes are complete: count their coverage, no new
			// generation (nothing else changes).
			cov, err := codedItems(ctx, tx)
			if err != nil {
				return err
			}
			_, err = tx.ExecContext(ctx, `UPDATE store_vector_quant SET code_items = ?, code_sum = ? WHERE id = 0`, cov.Items, int64(cov.Sum))
			return err
		}
		w.full = true
		gen, err := s.finishCodes(ctx, tx, w)
		if err != nil {
			return err
		}
		_, err = s.recode(ctx, tx, gen)
		return err
	})
	if err != nil {
		return fmt.Errorf("sqlite: coding vectors: %w", err)
	}
	return nil
}
