package sqlitestore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/memvault/memvault/internal/sqlfence"
	"github.com/memvault/memvault/internal/sqlitedb"
	"github.com/memvault/memvault/store"
	"github.com/memvault/memvault/store/engine"
	"github.com/memvault/memvault/store/vecindex"
)

// driver is the SQLite store.Driver: the tables of migrations/store, one
// writer at a time (sqlitedb), readers on snapshots. With an index its
// transactions keep the code index's tables (engine.IndexTx,
// engine.IndexWriter, engine.FloatSource; index.go): every transaction
// that changes items bumps store_generation and logs the items it changed
// in store_vector_log, writes the codes the engine made beside the vectors
// and keeps their coverage, so that other processes' indexes follow.
type driver struct {
	db    *sqlitedb.DB
	st    *stmts
	codes bool // the store has an index: codes are kept (DriverCaps.CodeIndex)
	ttl   bool // items may expire: vector scans skip expired items
}

func (d *driver) Name() string { return "sqlite" }

func (d *driver) Caps() store.DriverCaps {
	return store.DriverCaps{Transactions: true, CodeIndex: d.codes, UpsertVersions: true, TxRecords: true}
}

func (d *driver) Close() error {
	d.st.close()
	return d.db.Close()
}

// tx is a transaction of the driver.
type tx struct {
	*sqlitedb.Tx
	d     *driver
	ctx   context.Context // Begin's: the changes' bookkeeping at Commit
	rs    *readStmts      // the read statements of the transaction's pool
	write bool
	cw    *codeWrite // a write's bookkeeping, read at its first change
	buf   []store.Vector
	// argv holds exec's arguments: database/sql keeps none past the
	// call, so one array per transaction serves all its statements
	// instead of a slice per statement.
	argv [8]any
}

// Record implements engine.RecordTx: the record's row, inserted in the
// write's transaction (its table is the trail's, in this file, when
// the trail lives here; otherwise the insert fails, and so does the
// write).
func (t *tx) Record(ctx context.Context, r *store.RecordRow) error {
	_, err := t.ExecContext(ctx, r.InsertSQL(func(int) string { return "?" }), r.Values...)
	if err != nil {
		return fmt.Errorf("audit record: %w", err)
	}
	return nil
}

func (d *driver) Begin(ctx context.Context, write bool) (store.DriverTx, error) {
	t, err := d.db.Begin(ctx, write)
	if err != nil {
		return nil, err
	}
	rs := d.st.r
	if write {
		rs = d.st.w
	}
	return &tx{Tx: t, d: d, ctx: ctx, rs: rs, write: write}, nil
}

// Commit ends the transaction; a write that changed items and whose
// generation the engine did not bump (a store without index) bumps it
// here, so that the codes' bookkeeping (coverage, log) stays whole for
// processes with an index.
func (t *tx) Commit() error {
	if t.cw != nil && !t.cw.bumped {
		if _, err := t.Bump(t.ctx, t.cw.keys, t.cw.full); err != nil {
			_ = t.Tx.Rollback()
			return err
		}
	}
	return t.Tx.Commit()
}

// Fence implements engine.FenceTx: the write transaction holds the
// database's write lock, and runs the fence (the keys' check, then the
// erasure guard's statements) on its own connection.
func (t *tx) Fence(ctx context.Context, f store.WriteFence) error {
	if !t.write {
		return errReadOnly
	}
	return sqlfence.Run(ctx, t.Tx.Tx, t.d.db.Writer(), []store.WriteFence{f})
}

var errReadOnly = errors.New("sqlite: write in a read-only transaction")

const itemColumns = `prefix, key, value, created_at, updated_at, expires_at, ttl_minutes`

// rowScanner scans rows of itemColumns. Scan's targets, and the argument
// list naming them, escape to the heap: they are allocated once per query,
// not once per row (Scan stores copies of strings and bytes, so reusing
// them shares nothing between rows).
type rowScanner struct {
	r                   store.Row
	created, updated    int64
	expires, ttlMinutes sql.NullInt64
	dest                [7]any
}

func newRowScanner() *rowScanner {
	s := &rowScanner{}
	s.dest = [7]any{&s.r.NS, &s.r.Key, &s.r.Value, &s.created, &s.updated, &s.expires, &s.ttlMinutes}
	return s
}

// scan scans the current row of rs.
func (s *rowScanner) scan(rs interface{ Scan(...any) error }) (store.Row, error) {
	if err := rs.Scan(s.dest[:]...); err != nil {
		return store.Row{}, err
	}
	r := s.r
	r.Created, r.Updated = time.Unix(0, s.created), time.Unix(0, s.updated)
	if s.expires.Valid {
		r.Expires = time.Unix(0, s.expires.Int64)
	}
	r.TTLMinutes = int(s.ttlMinutes.Int64)
	return r, nil
}

// rows scans every row of rs.
func rows(rs *sql.Rows, err error) ([]store.Row, error) {
	if err != nil {
		return nil, err
	}
	return appendRows(nil, rs)
}

// appendRows appends every row of rs to dst.
func appendRows(dst []store.Row, rs *sql.Rows) ([]store.Row, error) {
	defer rs.Close()
	var sc *rowScanner
	for rs.Next() {
		if sc == nil {
			sc = newRowScanner()
		}
		r, err := sc.scan(rs)
		if err != nil {
			return dst, err
		}
		dst = append(dst, r)
	}
	return dst, rs.Err()
}

func (t *tx) Get(ctx context.Context, k store.RowKey) (store.Row, bool, error) {
	r, err := newRowScanner().scan(t.StmtContext(ctx, t.rs.get).QueryRowContext(ctx, k.NS, k.Key))
	if errors.Is(err, sql.ErrNoRows) {
		return store.Row{}, false, nil
	}
	return r, err == nil, err
}

func (t *tx) Rows(ctx context.Context, keys []store.RowKey, dst []store.Row) ([]store.Row, error) {
	for start := 0; start < len(keys); start += 400 {
		in, args := keysIn(keys[start:min(len(keys), start+400)])
		rs, err := t.QueryContext(ctx, `SELECT `+itemColumns+` FROM store WHERE `+in, args...)
		if err != nil {
			return dst, err
		}
		if dst, err = appendRows(dst, rs); err != nil {
			return dst, err
		}
	}
	return dst, nil
}

// live is the condition of live rows of store (alias s) at now.
const live = `(s.expires_at IS NULL OR s.expires_at > ?)`

func (t *tx) Scan(ctx context.Context, prefix store.Namespace, now time.Time, withoutVectors bool, after *store.ScanAfter, limit int) ([]store.Row, error) {
	cond, args := prefixCond("s.prefix", prefix)
	q := `SELECT ` + itemColumns + ` FROM store s WHERE ` + cond + ` AND ` + live
	args = append(args, now.UnixNano())
	if withoutVectors {
		q += ` AND NOT EXISTS (SELECT 1 FROM store_vectors v WHERE v.prefix = s.prefix AND v.key = s.key)`
	}
	if after != nil {
		u := after.Updated.UnixNano()
		q += ` AND (s.updated_at < ? OR (s.updated_at = ? AND (s.prefix, s.key) > (?, ?)))`
		args = append(args, u, u, after.NS, after.Key)
	}
	args = append(args, limit)
	return rows(t.QueryContext(ctx, q+` ORDER BY s.updated_at DESC, s.prefix, s.key LIMIT ?`, args...))
}

// vectors calls fn once per item of the rows of rs (prefix, key,
// updated_at, embedding, ordered by item) with its vectors, which are
// valid only during the call (Field is not read back: the engine does not
// use it). Embeddings that are not float32s are skipped.
func (t *tx) vectors(rs *sql.Rows, err error, fn func(k store.RowKey, updated time.Time, vs []store.Vector) error) error {
	if err != nil {
		return err
	}
	defer rs.Close()
	var (
		ns, key, emb sql.RawBytes
		upd          int64
		cur          store.RowKey
		curUpd       int64
		vs           = t.buf[:0]
	)
	flush := func() error {
		if len(vs) == 0 {
			return nil
		}
		err := fn(cur, time.Unix(0, curUpd), vs)
		vs = vs[:0]
		return err
	}
	for rs.Next() {
		if err := rs.Scan(&ns, &key, &upd, &emb); err != nil {
			return err
		}
		if string(ns) != cur.NS || string(key) != cur.Key {
			if err := flush(); err != nil {
				return err
			}
			cur = store.RowKey{NS: string(ns), Key: string(key)}
			curUpd = upd
		}
		n := len(vs)
		if n < cap(vs) {
			vs = vs[:n+1] // reuses the buffer of an earlier item's vector
		} else {
			vs = append(vs, store.Vector{})
		}
		var ok bool
		if vs[n].Vec, ok = decodeVector(vs[n].Vec, emb); !ok {
			vs = vs[:n]
		}
	}
	if err := rs.Err(); err != nil {
		return err
	}
	err = flush()
	t.buf = vs[:0]
	return err
}

func (t *tx) Vectors(ctx context.Context, prefix store.Namespace, now time.Time, fn func(store.RowKey, time.Time, []store.Vector) error) error {
	cond, args := prefixCond("v.prefix", prefix)
	q := `SELECT v.prefix, v.key, v.updated_at, v.embedding FROM store_vectors v WHERE ` + cond
	if t.d.ttl {
		q = `SELECT v.prefix, v.key, v.updated_at, v.embedding FROM store_vectors v
			JOIN store s ON s.prefix = v.prefix AND s.key = v.key WHERE ` + cond + ` AND ` + live
		args = append(args, now.UnixNano())
	}
	rs, err := t.QueryContext(ctx, q+` ORDER BY v.prefix, v.key`, args...)
	return t.vectors(rs, err, fn)
}

func (t *tx) Page(ctx context.Context, ns, after string, limit int, now time.Time) ([]store.Row, error) {
	return rows(t.QueryContext(ctx, `SELECT `+itemColumns+` FROM store s
		WHERE s.prefix = ? AND s.key > ? AND `+live+` ORDER BY s.key LIMIT ?`, ns, after, now.UnixNano(), limit))
}

func (t *tx) Namespaces(ctx context.Context, prefix store.Namespace, now time.Time) ([]store.Namespace, error) {
	cond, args := prefixCond("s.prefix", prefix)
	rs, err := t.QueryContext(ctx, `SELECT DISTINCT s.prefix FROM store s WHERE `+cond+` AND `+live, append(args, now.UnixNano())...)
	if err != nil {
		return nil, err
	}
	defer rs.Close()
	var all []store.Namespace
	for rs.Next() {
		var p string
		if err := rs.Scan(&p); err != nil {
			return nil, err
		}
		all = append(all, store.ParseNamespace(p))
	}
	return all, rs.Err()
}

// exec runs a statement of the writer pool in t.
func (t *tx) exec(ctx context.Context, st *sql.Stmt, args ...any) (int64, error) {
	args = append(t.argv[:0], args...)
	res, err := t.StmtContext(ctx, st).ExecContext(ctx, args...)
	clear(args) // keep no value alive through the transaction
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// Put stores w with the engine's replace rule in its upsert
// (store.DriverCaps.UpsertVersions): SQLite keeps created_at and moves
// updated_at past the replaced row's, so that the engine does not read the
// row first.
func (t *tx) Put(ctx context.Context, w store.RowWrite) error {
	cw, err := t.codeWrite(ctx)
	if err != nil {
		return err
	}
	cw.changed(t, w.RowKey)
	// Boxed once for the item's statements (a string in an interface is
	// an allocation).
	ns, key := any(w.NS), any(w.Key)
	var exp, ttl any
	if !w.Expires.IsZero() {
		exp = w.Expires.UnixNano()
	}
	if w.TTLMinutes > 0 {
		ttl = w.TTLMinutes
	}
	if w.Reindex {
		if err := t.dropVectors(ctx, cw, w.RowKey, ns, key); err != nil {
			return err
		}
	}
	if _, err := t.exec(ctx, t.d.st.replace, ns, key, w.Value, w.Created.UnixNano(), w.Updated.UnixNano(), exp, ttl); err != nil {
		return err
	}
	// The vectors' and codes' updated_at is the row's, as stored (the
	// statements read it).
	coded := false
	for _, v := range w.Vectors {
		field := any(v.Field)
		if _, err := t.exec(ctx, t.d.st.insVec, ns, key, field, encodeVector(v.Vec)); err != nil {
			return err
		}
		if v.Code != nil {
			if _, err := t.putCode(ctx, t.d.st.putCode, v.Code, ns, key, field); err != nil {
				return err
			}
			coded = true
		}
	}
	if coded {
		cw.cov.Cov.Add(vecindex.ItemHash(w.RowKey))
	}
	return nil
}

// dropVectors deletes the vectors and codes of item k (ns and key: its
// namespace and key, boxed); its codes leave the coverage.
func (t *tx) dropVectors(ctx context.Context, cw *codeWrite, k store.RowKey, ns, key any) error {
	if _, err := t.exec(ctx, t.d.st.delVec, ns, key); err != nil {
		return err
	}
	n, err := t.exec(ctx, t.d.st.delCodes, ns, key)
	if n > 0 {
		cw.cov.Cov.Sub(vecindex.ItemHash(k))
	}
	return err
}

func (t *tx) Delete(ctx context.Context, k store.RowKey) error {
	cw, err := t.codeWrite(ctx)
	if err != nil {
		return err
	}
	cw.changed(t, k)
	cw.deleted = true
	ns, key := any(k.NS), any(k.Key)
	if err := t.dropVectors(ctx, cw, k, ns, key); err != nil {
		return err
	}
	_, err = t.exec(ctx, t.d.st.delItem, ns, key)
	return err
}

func (t *tx) Refresh(ctx context.Context, k store.RowKey, expires time.Time) error {
	if !t.write {
		return errReadOnly
	}
	_, err := t.exec(ctx, t.d.st.refresh, expires.UnixNano(), k.NS, k.Key)
	return err
}

// dropCodes deletes the code rows of the items that cond (on store_vector_codes) selects,
// taking the items out of the coverage.
func (t *tx) dropCodes(ctx context.Context, cw *codeWrite, cond string, args []any) error {
	rs, err := t.QueryContext(ctx, `DELETE FROM store_vector_codes WHERE `+cond+` RETURNING prefix, key`, args...)
	if err != nil {
		return err
	}
	defer rs.Close()
	seen := map[store.RowKey]bool{}
	for rs.Next() {
		var k store.RowKey
		if err := rs.Scan(&k.NS, &k.Key); err != nil {
			return err
		}
		if !seen[k] {
			seen[k] = true
			cw.cov.Cov.Sub(vecindex.ItemHash(k))
		}
	}
	return rs.Err()
}

func (t *tx) DeletePrefix(ctx context.Context, prefix store.Namespace) (int, error) {
	cw, err := t.codeWrite(ctx)
	if err != nil {
		return 0, err
	}
	cond, args := prefixCond("prefix", prefix)
	if err := t.dropCodes(ctx, cw, cond, args); err != nil {
		return 0, err
	}
	// Explicit, in case a wrapped database runs without foreign keys.
	if _, err := t.ExecContext(ctx, `DELETE FROM store_vectors WHERE `+cond, args...); err != nil {
		return 0, err
	}
	res, err := t.ExecContext(ctx, `DELETE FROM store WHERE `+cond, args...)
	if err != nil {
		return 0, err
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, err
	}
	// What an erasure deletes leaves no name behind in the log either:
	// its rows go, and a full marker stands for them.
	if _, err := t.ExecContext(ctx, `DELETE FROM store_vector_log WHERE `+cond, args...); err != nil {
		return 0, err
	}
	cw.deleted, cw.full = true, true
	return int(n), nil
}

func (t *tx) DeleteExpired(ctx context.Context, now time.Time) ([]store.RowKey, error) {
	cw, err := t.codeWrite(ctx)
	if err != nil {
		return nil, err
	}
	const expired = `(prefix, key) IN (SELECT prefix, key FROM store WHERE expires_at IS NOT NULL AND expires_at < ?)`
	cut := now.UnixNano()
	rs, err := t.QueryContext(ctx, `SELECT prefix, key FROM store WHERE expires_at IS NOT NULL AND expires_at < ?`, cut)
	if err != nil {
		return nil, err
	}
	var gone []store.RowKey
	for rs.Next() {
		var k store.RowKey
		if err := rs.Scan(&k.NS, &k.Key); err != nil {
			rs.Close()
			return nil, err
		}
		gone = append(gone, k)
	}
	rs.Close()
	if err := rs.Err(); err != nil || len(gone) == 0 {
		return nil, err
	}
	if err := t.dropCodes(ctx, cw, expired, []any{cut}); err != nil {
		return nil, err
	}
	if _, err := t.ExecContext(ctx, `DELETE FROM store_vectors WHERE `+expired, cut); err != nil {
		return nil, err
	}
	if _, err := t.ExecContext(ctx, `DELETE FROM store WHERE expires_at IS NOT NULL AND expires_at < ?`, cut); err != nil {
		return nil, err
	}
	cw.changed(t, gone...)
	cw.deleted = true
	return gone, nil
}

// prefixCond selects the rows whose column col is prefix or under it. A
// range on the stored text ('.' is followed by '/' in byte order) is exact,
// needs no LIKE escaping, is case-sensitive (SQLite's LIKE is not) and
// uses the primary key: one range, [p, p + "/"), filtered to p and
// [p + ".", p + "/"), so that SQLite scans it in key order (an OR of the
// two made it union two searches and sort them for a scan in key order).
func prefixCond(col string, prefix store.Namespace) (string, []any) {
	if len(prefix) == 0 {
		return "1", nil
	}
	p := prefix.String()
	return "(" + col + " >= ? AND " + col + " < ? AND (" + col + " = ? OR " + col + " >= ?))", []any{p, p + "/", p, p + "."}
}

// keysIn returns the condition "(prefix, key) IN (VALUES (?, ?), ...)"
// for keys, with its arguments: one statement reads a batch of items.
// Callers bound the batch (SQLite allows 32 766 parameters).
func keysIn(keys []store.RowKey) (string, []any) {
	var q strings.Builder
	q.WriteString(`(prefix, key) IN (VALUES `)
	args := make([]any, 0, 2*len(keys))
	for i, k := range keys {
		if i > 0 {
			q.WriteString(", ")
		}
		q.WriteString("(?, ?)")
		args = append(args, k.NS, k.Key)
	}
	q.WriteString(")")
	return q.String(), args
}

var (
	_ store.DriverTx     = (*tx)(nil)
	_ engine.FenceTx     = (*tx)(nil)
	_ engine.IndexTx     = (*tx)(nil)
	_ engine.IndexWriter = (*tx)(nil)
	_ engine.FloatSource = (*tx)(nil)
	_ store.Driver       = (*driver)(nil)
)
