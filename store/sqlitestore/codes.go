package sqlitestore

import (
	"context"
	"database/sql"
	"strings"
	"time"

	"github.com/memvault/memvault/store"
	"github.com/memvault/memvault/store/vecindex"
)

// The code index's tables (package vecindex, driven by the engine): every
// write transaction that changes items bumps store_generation.gen and
// records the items it changed in store_vector_log, writes the codes the
// engine made to store_vector_codes beside the vectors and keeps their
// coverage in store_vector_quant; a read transaction reads them back
// (vecindex.Source), seeing one generation of all of them.

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
)

// codeWrite is a write transaction's bookkeeping of the code index.
type codeWrite struct {
	prevGen, codesGen int64 // the generation and the codes' before this transaction
	snapGen           int64
	centre            []float32      // the centre codes are made with (nil: none)
	keys              []store.RowKey // items changed
	full              bool           // every item may have changed: log a full marker
	// deleted: some item went. The snapshot, which would keep its
	// namespace, key and code in the file, is dropped (secure_delete
	// zeroes its pages); the process that deleted stores a new one of
	// its index behind the commit when it holds one (vecindex
	// resnap.go), else the next that searches, or a load that reads
	// every code, does.
	deleted bool
	bumped  bool // Bump ran
	// cov is the coverage of the items with code rows (vecindex.Coverage),
	// kept as the transaction writes and deletes codes, stored by Bump.
	cov vecindex.StoredCoverage
}

// changed records items the transaction changed, for the log of a store
// without index (the engine hands the changes to Bump otherwise).
func (w *codeWrite) changed(t *tx, keys ...store.RowKey) {
	if !t.d.codes {
		w.keys = append(w.keys, keys...)
	}
}

// codeWrite returns the transaction's bookkeeping, reading what it needs
// at the first change.
func (t *tx) codeWrite(ctx context.Context) (*codeWrite, error) {
	if !t.write {
		return nil, errReadOnly
	}
	if t.cw != nil {
		return t.cw, nil
	}
	w := &codeWrite{}
	var (
		raw        []byte
		items, sum sql.NullInt64
	)
	if err := t.StmtContext(ctx, t.d.st.quant).QueryRowContext(ctx).Scan(&w.prevGen, &w.codesGen, &raw, &w.snapGen, &items, &sum); err != nil {
		return nil, err
	}
	w.cov = scanCoverage(items, sum)
	if len(raw) > 0 {
		w.centre, _ = decodeVector(nil, raw)
	}
	t.cw = w
	return w, nil
}

// coverage and storedCoverage are the codes' coverage (vecindex.Coverage)
// and as read from store_vector_quant.
type (
	coverage       = vecindex.Coverage
	storedCoverage = vecindex.StoredCoverage
)

// scanCoverage is the stored coverage of the columns' values: Known is
// false until Open has computed it (a database from before the columns).
func scanCoverage(items, sum sql.NullInt64) vecindex.StoredCoverage {
	return vecindex.StoredCoverage{Cov: vecindex.Coverage{Items: items.Int64, Sum: uint64(sum.Int64)}, Known: items.Valid && sum.Valid}
}

// Bump ends the transaction's changes: it bumps the generation, logs the
// changed items (or a full marker), trims the log, advances the codes'
// generation (when they were complete) and stores their coverage.
func (t *tx) Bump(ctx context.Context, changed []store.RowKey, full bool) (int64, error) {
	w, err := t.codeWrite(ctx)
	if err != nil {
		return 0, err
	}
	w.bumped = true
	var gen int64
	if err := t.StmtContext(ctx, t.d.st.bump).QueryRowContext(ctx).Scan(&gen); err != nil {
		return 0, err
	}
	if w.deleted {
		if err := t.dropSnapshot(ctx); err != nil {
			return 0, err
		}
	}
	if full = full || w.full || len(changed) > maxLogItems; full {
		if _, err := t.exec(ctx, t.d.st.insLog, gen, nil, nil); err != nil {
			return 0, err
		}
	} else {
		for _, k := range changed {
			if _, err := t.exec(ctx, t.d.st.insLog, gen, k.NS, k.Key); err != nil {
				return 0, err
			}
		}
	}
	var items, sum any
	if w.cov.Known {
		items, sum = w.cov.Cov.Items, int64(w.cov.Cov.Sum)
	}
	if _, err := t.exec(ctx, t.d.st.setQuant, w.prevGen, gen, gen-logKeep, gen-logKeepMax, items, sum); err != nil {
		return 0, err
	}
	_, err = t.exec(ctx, t.d.st.trimLog)
	return gen, err
}

func (t *tx) dropSnapshot(ctx context.Context) error {
	if _, err := t.ExecContext(ctx, `DELETE FROM store_vector_snapshot`); err != nil {
		return err
	}
	_, err := t.ExecContext(ctx, `UPDATE store_vector_quant SET snapshot_gen = -1 WHERE id = 0`)
	return err
}

func (t *tx) IndexState(ctx context.Context) (q vecindex.State, err error) {
	var items, sum sql.NullInt64
	err = t.StmtContext(ctx, t.rs.gen).QueryRowContext(ctx).Scan(&q.Gen, &q.CodesGen, &q.LogFloor, &items, &sum, &q.SnapshotGone, &q.NoSnapshot)
	q.Stored = scanCoverage(items, sum)
	return q, err
}

func (t *tx) Quant(ctx context.Context) ([]float32, int64, error) {
	if t.write {
		// A write reads the centre with its bookkeeping.
		w, err := t.codeWrite(ctx)
		if err != nil {
			return nil, 0, err
		}
		return w.centre, w.snapGen, nil
	}
	var (
		raw     []byte
		snapGen int64
	)
	if err := t.QueryRowContext(ctx, `SELECT centre, snapshot_gen FROM store_vector_quant WHERE id = 0`).Scan(&raw, &snapGen); err != nil {
		return nil, 0, err
	}
	centre, _ := decodeVector(nil, raw)
	return centre, snapGen, nil
}

func (t *tx) Changed(ctx context.Context, since int64, limit int) (keys []store.RowKey, full bool, err error) {
	rs, err := t.QueryContext(ctx, `SELECT DISTINCT prefix, key FROM store_vector_log WHERE gen > ? LIMIT ?`, since, limit+1)
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
		keys = append(keys, store.RowKey{NS: ns.String, Key: key.String})
	}
	return keys, false, rs.Err()
}

// putCode writes a code EncodeCode made as a code row of its sign bits
// (format 2, which fits the page) with st, whose arguments are args
// (prefix, key, field_name first) and the code, and its fine part to
// store_vector_fine (see migrations/store/07_fine_table.sql); a code
// without fine part leaves none behind. It returns the code rows written.
func (t *tx) putCode(ctx context.Context, st *sql.Stmt, code []byte, args ...any) (int64, error) {
	signs, fine := vecindex.SplitCode(code)
	n, err := t.exec(ctx, st, append(args, signs)...)
	if err != nil || n == 0 {
		return n, err
	}
	if fine == nil {
		_, err = t.ExecContext(ctx, `DELETE FROM store_vector_fine WHERE prefix = ? AND key = ? AND field_name = ?`, args[0], args[1], args[2])
		return n, err
	}
	_, err = t.exec(ctx, t.d.st.putFine, args[0], args[1], args[2], fine)
	return n, err
}

// codesBatch is how many items tx.Codes reads in one query.
const codesBatch = 200

// sqlCodes reads the code rows of codesBatch items with their fine parts.
var sqlCodes = func() string {
	in, _ := keysIn(make([]store.RowKey, codesBatch))
	return `SELECT c.prefix, c.key, c.updated_at, c.code, f.fine
		FROM store_vector_codes c LEFT JOIN store_vector_fine f
		ON f.prefix = c.prefix AND f.key = c.key AND f.field_name = c.field_name
		WHERE ` + strings.Replace(in, "(prefix, key)", "(c.prefix, c.key)", 1)
}()

// sqlFines reads the fine parts of codesBatch items.
var sqlFines = func() string {
	in, _ := keysIn(make([]store.RowKey, codesBatch))
	return `SELECT prefix, key, fine FROM store_vector_fine WHERE ` + in
}()

// Fines reads the fine parts of the codes of keys alone, in one query a
// batch (vecindex.FineReader): a search bounds its candidates by them
// against the sign bits and metadata its index holds, without reading
// the code rows (a third of the pages a candidate, in the first search
// after opening a store, whose pages are not cached yet).
func (t *tx) Fines(ctx context.Context, keys []store.RowKey, fn func(k store.RowKey, fine []byte)) error {
	var (
		k    store.RowKey
		fine sql.RawBytes
	)
	return byKeyBatches(ctx, t.StmtContext(ctx, t.rs.fines), keys, func(rs *sql.Rows) error {
		if err := rs.Scan(&k.NS, &k.Key, &fine); err != nil {
			return err
		}
		fn(k, fine)
		return nil
	})
}

// Codes reads the code rows of keys with their fine parts, in one query
// a batch, and hands each as the blob EncodeCode made (vecindex.JoinCode).
func (t *tx) Codes(ctx context.Context, keys []store.RowKey, fn func(k store.RowKey, updated int64, code []byte)) error {
	var (
		joined  []byte
		k       store.RowKey
		upd     int64
		b, fine sql.RawBytes
	)
	return byKeyBatches(ctx, t.StmtContext(ctx, t.rs.codes), keys, func(rs *sql.Rows) error {
		if err := rs.Scan(&k.NS, &k.Key, &upd, &b, &fine); err != nil {
			return err
		}
		joined = vecindex.JoinCode(joined[:0], b, fine)
		fn(k, upd, joined)
		return nil
	})
}

// byKeyBatches runs st — a query taking codesBatch (namespace, key)
// pairs — over keys a batch at a time, and scan on each row it returns.
func byKeyBatches(ctx context.Context, st *sql.Stmt, keys []store.RowKey, scan func(*sql.Rows) error) error {
	args := make([]any, 2*codesBatch)
	for start := 0; start < len(keys); start += codesBatch {
		batch := keys[start:min(len(keys), start+codesBatch)]
		for i := range codesBatch {
			// A short batch repeats its last key: IN matches each row once.
			k := batch[min(i, len(batch)-1)]
			args[2*i], args[2*i+1] = k.NS, k.Key
		}
		rs, err := st.QueryContext(ctx, args...)
		if err != nil {
			return err
		}
		for rs.Next() {
			if err := scan(rs); err != nil {
				rs.Close()
				return err
			}
		}
		err = rs.Err()
		rs.Close()
		if err != nil {
			return err
		}
	}
	return nil
}

func (t *tx) AllCodes(ctx context.Context, fn func(ns, key []byte, updated int64, code []byte) bool) error {
	// In primary-key order, an item's codes together: WITHOUT ROWID, the
	// scan is that order already, without sorting. Each code comes with
	// its fine part (vecindex.JoinCode), from which the index derives the
	// middle part it holds in memory.
	rs, err := t.QueryContext(ctx, `SELECT c.prefix, c.key, c.updated_at, c.code, f.fine
		FROM store_vector_codes c LEFT JOIN store_vector_fine f
		ON f.prefix = c.prefix AND f.key = c.key AND f.field_name = c.field_name
		ORDER BY c.prefix, c.key, c.field_name`)
	if err != nil {
		return err
	}
	defer rs.Close()
	var (
		ns, key, b, fine sql.RawBytes
		upd              int64
		joined           []byte
	)
	for rs.Next() {
		if err := rs.Scan(&ns, &key, &upd, &b, &fine); err != nil {
			return err
		}
		joined = vecindex.JoinCode(joined[:0], b, fine)
		if !fn(ns, key, upd, joined) {
			return nil
		}
	}
	return rs.Err()
}

func (t *tx) SnapshotSize(ctx context.Context) (int64, error) {
	// length() of a blob reads no content.
	var total int64
	err := t.QueryRowContext(ctx, `SELECT coalesce(sum(length(data)), 0) FROM store_vector_snapshot`).Scan(&total)
	return total, err
}

func (t *tx) SnapshotParts(ctx context.Context, use func([]byte) bool) error {
	return readParts(ctx, t.Tx.Tx, use)
}

func (t *tx) VectorsOf(ctx context.Context, keys []store.RowKey, fn func(store.RowKey, time.Time, []store.Vector) error) error {
	for start := 0; start < len(keys); start += 200 {
		in, args := keysIn(keys[start:min(len(keys), start+200)])
		rs, err := t.QueryContext(ctx, `SELECT prefix, key, updated_at, embedding FROM store_vectors WHERE `+in+` ORDER BY prefix, key`, args...)
		if err := t.vectors(rs, err, fn); err != nil {
			return err
		}
	}
	return nil
}

func (t *tx) AllVectors(ctx context.Context, fn func(store.RowKey, time.Time, []store.Vector) error) error {
	// The scan walks the primary key's index (migration 9), in key order,
	// an item's vectors together, without sorting; each row is then read
	// by its row id (rows a migration copied lie in key order in the file).
	rs, err := t.QueryContext(ctx, `SELECT prefix, key, updated_at, embedding FROM store_vectors ORDER BY prefix, key`)
	return t.vectors(rs, err, fn)
}

func (t *tx) StorageBytes(ctx context.Context) (int64, error) {
	var pages, pageSize int64
	err := t.QueryRowContext(ctx, `SELECT page_count, page_size FROM pragma_page_count(), pragma_page_size()`).Scan(&pages, &pageSize)
	return pages * pageSize, err
}

// current is the condition that generation ? is still the database's and
// its codes'.
const current = `codes_gen = ? AND (SELECT gen FROM store_generation WHERE id = 0) = ?`

func (t *tx) PutSnapshot(ctx context.Context, gen int64, parts [][]byte) (bool, error) {
	// Only the current generation is written: an index of an older one
	// could hold an item deleted since, whose delete dropped the snapshot
	// so that its name and code leave the file.
	var ok bool
	if err := t.QueryRowContext(ctx, `SELECT count(*) FROM store_vector_quant WHERE id = 0 AND `+current, gen, gen).Scan(&ok); err != nil || !ok {
		return false, err
	}
	if _, err := t.ExecContext(ctx, `DELETE FROM store_vector_snapshot`); err != nil {
		return false, err
	}
	for i, p := range parts {
		if _, err := t.ExecContext(ctx, `INSERT INTO store_vector_snapshot (part, data) VALUES (?, ?)`, i, p); err != nil {
			return false, err
		}
	}
	_, err := t.ExecContext(ctx, `UPDATE store_vector_quant SET snapshot_gen = ? WHERE id = 0`, gen)
	return err == nil, err
}

func (t *tx) PutCoverage(ctx context.Context, gen int64, cov vecindex.Coverage) (bool, error) {
	res, err := t.ExecContext(ctx, `UPDATE store_vector_quant SET code_items = ?, code_sum = ? WHERE id = 0 AND `+current,
		cov.Items, int64(cov.Sum), gen, gen)
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

func (t *tx) CountCoverage(ctx context.Context) error {
	c, err := codedItems(ctx, t.Tx.Tx)
	if err != nil {
		return err
	}
	_, err = t.ExecContext(ctx, `UPDATE store_vector_quant SET code_items = ?, code_sum = ? WHERE id = 0`, c.Items, int64(c.Sum))
	return err
}

// codedItems computes the coverage of the items with code rows in tx by
// reading every key of store_vector_codes.
func codedItems(ctx context.Context, tx *sql.Tx) (coverage, error) {
	var c coverage
	rs, err := tx.QueryContext(ctx, `SELECT prefix, key FROM store_vector_codes GROUP BY prefix, key`)
	if err != nil {
		return c, err
	}
	defer rs.Close()
	var (
		ns, key sql.RawBytes
		lastNS  string
		nh      = vecindex.NSHash("")
	)
	for rs.Next() {
		if err := rs.Scan(&ns, &key); err != nil {
			return c, err
		}
		if string(ns) != lastNS {
			lastNS = string(ns)
			nh = vecindex.NSHash(lastNS)
		}
		c.Add(vecindex.KeyHash(nh, []byte(key)))
	}
	return c, rs.Err()
}

// CodedItems implements engine.IndexWriter: the coverage the write
// keeps (read with its bookkeeping, updated as it writes and deletes
// codes), counted only in a file written before the coverage was kept.
func (t *tx) CodedItems(ctx context.Context) (n int64, err error) {
	w, err := t.codeWrite(ctx)
	if err != nil {
		return 0, err
	}
	if w.cov.Known {
		return w.cov.Cov.Items, nil
	}
	err = t.QueryRowContext(ctx, `SELECT count(*) FROM (SELECT DISTINCT prefix, key FROM store_vector_codes)`).Scan(&n)
	return n, err
}

func (t *tx) SampleVectors(ctx context.Context, limit int, fn func([]float32)) error {
	rs, err := t.QueryContext(ctx, `SELECT embedding FROM store_vectors LIMIT ?`, limit)
	if err != nil {
		return err
	}
	defer rs.Close()
	var (
		raw sql.RawBytes
		buf []float32
	)
	for rs.Next() {
		if err := rs.Scan(&raw); err != nil {
			return err
		}
		var ok bool
		if buf, ok = decodeVector(buf, raw); ok {
			fn(buf)
		}
	}
	return rs.Err()
}

func (t *tx) Recode(ctx context.Context, gen int64, centre []float32, code func([]float32) []byte) error {
	var cov vecindex.Coverage
	// The fine parts first, in one pass: the trigger that deletes a code
	// row's fine part then finds none.
	if _, err := t.ExecContext(ctx, `DELETE FROM store_vector_fine`); err != nil {
		return err
	}
	if _, err := t.ExecContext(ctx, `DELETE FROM store_vector_codes`); err != nil {
		return err
	}
	type row struct {
		ns, key, field string
		upd            int64
		code           []byte
	}
	var (
		after [3]string
		last  store.RowKey
		raw   []byte
		buf   []float32
	)
	for first, more := true, true; more; first = false {
		// Pages keep the statement and the inserts apart.
		cond, args := `(prefix, key, field_name) > (?, ?, ?)`, []any{after[0], after[1], after[2]}
		if first {
			cond, args = "1", nil
		}
		rs, err := t.QueryContext(ctx, `SELECT prefix, key, field_name, updated_at, embedding FROM store_vectors
			WHERE `+cond+` ORDER BY prefix, key, field_name LIMIT 256`, args...)
		if err != nil {
			return err
		}
		var page []row
		for rs.Next() {
			var r row
			if err := rs.Scan(&r.ns, &r.key, &r.field, &r.upd, &raw); err != nil {
				rs.Close()
				return err
			}
			var ok bool
			if buf, ok = decodeVector(buf, raw); ok {
				r.code = code(buf)
			}
			page = append(page, r)
		}
		rs.Close()
		if err := rs.Err(); err != nil {
			return err
		}
		more = len(page) == 256
		for _, r := range page {
			after = [3]string{r.ns, r.key, r.field}
			if r.code == nil {
				continue
			}
			if _, err := t.putCode(ctx, t.d.st.insCode, r.code, r.ns, r.key, r.field, r.upd); err != nil {
				return err
			}
			if k := (store.RowKey{NS: r.ns, Key: r.key}); cov.Items == 0 || k != last {
				cov.Add(vecindex.ItemHash(k))
				last = k
			}
		}
	}
	var c any
	if centre != nil {
		c = encodeVector(centre)
	}
	if _, err := t.ExecContext(ctx, `DELETE FROM store_vector_snapshot`); err != nil {
		return err
	}
	if t.cw != nil {
		t.cw.cov = vecindex.StoredCoverage{Cov: cov, Known: true}
	}
	_, err := t.ExecContext(ctx, `UPDATE store_vector_quant SET centre = ?, codes_gen = ?, snapshot_gen = -1,
		code_items = ?, code_sum = ? WHERE id = 0`, c, gen, cov.Items, int64(cov.Sum))
	return err
}
