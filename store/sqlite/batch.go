package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"github.com/memvault/memvault/store/internal/vecindex"
	"strings"
	"time"

	"github.com/memvault/memvault/internal/binding"
	"github.com/memvault/memvault/store"
	"github.com/memvault/memvault/store/internal/filtering"
	"github.com/memvault/memvault/store/internal/items"
)

// itemKey names an item (the index's key type).
type itemKey = vecindex.Key

// put is a validated, encoded and embedded write.
type put struct {
	*items.Put
	k       itemKey
	encoded []byte        // the value column; nil deletes
	fence   binding.Fence // the key that sealed the value (binding.Fence)
	codes   [][]byte      // the codes of Vectors written (see putCodes)
}

// refreshKey is an item whose TTL a read refreshed.
type refreshKey struct {
	k         itemKey
	expiresAt int64
}

// Batch runs ops: every read sees the state before the batch's writes, and
// of several writes to one key the last wins. Embedding and encryption run
// before the database is touched; a batch with writes is one write
// transaction, a read-only batch one read transaction (followed by a short
// write transaction when it refreshes TTLs).
func (s *Store) Batch(ctx context.Context, ops []store.Op) ([]store.Result, error) {
	return s.batch(ctx, ops, nil)
}

// batch is Batch; forget, when not nil, is the namespace a DeletePrefix
// empties, whose items' names the search index's log must not keep.
func (s *Store) batch(ctx context.Context, ops []store.Op, forget store.Namespace) ([]store.Result, error) {
	plan, puts, err := items.StartBatch(ctx, s.b, ops, s.encodePut)
	if err != nil {
		return nil, err
	}
	queries := plan.Queries
	now := s.b.Now()
	results := make([]store.Result, len(ops))
	var refreshes []refreshKey
	reads := func(ctx context.Context, tx *sql.Tx, rs *readStmts) error {
		refreshes = refreshes[:0]
		for i, op := range ops {
			var err error
			switch o := op.(type) {
			case store.GetOp:
				results[i].Item, err = s.get(ctx, tx, rs, o, now, &refreshes)
			case store.SearchOp:
				results[i].Items, err = s.search(ctx, tx, rs, o.Prefix, o.Options, queries[o.Options.Query], now, &refreshes)
			case store.ListNamespacesOp:
				results[i].Namespaces, err = s.listNamespaces(ctx, tx, o.Options, now)
			}
			if err != nil {
				return fmt.Errorf("sqlite: op %d: %w", i, err)
			}
		}
		return nil
	}
	if len(puts) > 0 {
		var (
			gen int64
			cw  *codeWrite
		)
		err := s.db.WriteCommitted(ctx, func(tx *sql.Tx) error {
			if err := reads(ctx, tx, s.st.w); err != nil {
				return err
			}
			if err := s.applyRefreshes(ctx, tx, refreshes); err != nil {
				return err
			}
			var err error
			if cw, err = s.beginCodes(ctx, tx); err != nil {
				return err
			}
			cw.forget = forget
			if err := s.applyPuts(ctx, tx, cw, puts, now); err != nil {
				return err
			}
			gen, err = s.finishCodes(ctx, tx, cw)
			return err
		}, func() {
			s.committed(gen, puts, now.UnixNano(), cw.full)
		})
		if err != nil {
			return nil, wrap(err)
		}
		s.maybeSnapshot(ctx)
		return results, nil
	}
	if err := s.db.Read(ctx, func(tx *sql.Tx) error { return reads(ctx, tx, s.st.r) }); err != nil {
		return nil, wrap(err)
	}
	s.maybeSnapshot(ctx)
	if len(refreshes) > 0 {
		err := s.db.Write(ctx, func(tx *sql.Tx) error { return s.applyRefreshes(ctx, tx, refreshes) })
		if err != nil {
			return nil, wrap(err)
		}
	}
	return results, nil
}

// wrap prefixes errors that do not carry the package prefix yet (those of
// the transaction itself rather than of an op).
func wrap(err error) error {
	if strings.HasPrefix(err.Error(), "sqlite: ") {
		return err
	}
	return fmt.Errorf("sqlite: %w", err)
}

// encodePut is a prepared write with its value column encoded (and
// sealed to its item).
func (s *Store) encodePut(ctx context.Context, ip *items.Put) (*put, error) {
	p := &put{Put: ip, k: itemKey{NS: ip.Prefix, Key: ip.Key}}
	if ip.Value != nil {
		var err error
		if p.encoded, err = s.encodeValue(ctx, p.k.NS, p.k.Key, ip.Value, &p.fence); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// applyPuts performs the batch's writes in tx, with their codes.
func (s *Store) applyPuts(ctx context.Context, tx *sql.Tx, cw *codeWrite, puts []*put, now time.Time) error {
	// Holding the write lock: an erasure's DrainWrites waits for this.
	var fence binding.Fence
	for _, p := range puts {
		fence.Merge(&p.fence)
	}
	if err := s.codec.Check(ctx, &fence); err != nil {
		return err
	}
	ts := now.UnixNano()
	delVec := tx.StmtContext(ctx, s.st.delVec)
	var upsert, delItem, insVec *sql.Stmt
	for _, p := range puts {
		if _, err := delVec.ExecContext(ctx, p.k.NS, p.k.Key); err != nil {
			return err
		}
		if err := s.putCodes(ctx, tx, cw, p, ts); err != nil {
			return err
		}
		if p.encoded == nil {
			if delItem == nil {
				delItem = tx.StmtContext(ctx, s.st.delItem)
			}
			if _, err := delItem.ExecContext(ctx, p.k.NS, p.k.Key); err != nil {
				return err
			}
			continue
		}
		if upsert == nil {
			upsert = tx.StmtContext(ctx, s.st.upsert)
		}
		var exp, ttlMin any
		if p.TTL > 0 {
			exp, ttlMin = now.Add(p.TTL).UnixNano(), items.TTLMinutes(p.TTL)
		}
		if _, err := upsert.ExecContext(ctx, p.k.NS, p.k.Key, p.encoded, ts, ts, exp, ttlMin); err != nil {
			return err
		}
		for i, v := range p.Vectors {
			if insVec == nil {
				insVec = tx.StmtContext(ctx, s.st.insVec)
			}
			if _, err := insVec.ExecContext(ctx, p.k.NS, p.k.Key, p.Texts[i].Field, encodeVector(v), ts, ts); err != nil {
				return err
			}
		}
	}
	return nil
}

func (s *Store) applyRefreshes(ctx context.Context, tx *sql.Tx, rs []refreshKey) error {
	if len(rs) == 0 {
		return nil
	}
	st := tx.StmtContext(ctx, s.st.refresh)
	for _, r := range rs {
		if _, err := st.ExecContext(ctx, r.expiresAt, r.k.NS, r.k.Key); err != nil {
			return err
		}
	}
	return nil
}

// prefixCond selects the rows whose column col is prefix or under it. A
// range on the stored text ('.' is followed by '/' in byte order) is exact,
// needs no LIKE escaping, is case-sensitive (SQLite's LIKE is not) and
// uses the primary key.
func prefixCond(col string, prefix store.Namespace) (string, []any) {
	if len(prefix) == 0 {
		return "1", nil
	}
	p := prefix.String()
	return "(" + col + " = ? OR (" + col + " >= ? AND " + col + " < ?))", []any{p, p + ".", p + "/"}
}

const itemColumns = `prefix, key, value, created_at, updated_at, expires_at, ttl_minutes`

// itemRow is a scanned store row.
type itemRow struct {
	k                   itemKey
	value               []byte
	created, updated    int64
	expires, ttlMinutes sql.NullInt64
}

func scanItem(rs *sql.Rows) (itemRow, error) {
	var r itemRow
	err := rs.Scan(&r.k.NS, &r.k.Key, &r.value, &r.created, &r.updated, &r.expires, &r.ttlMinutes)
	return r, err
}

// item decodes a row (unless v is its value, decoded already), refreshing
// its TTL when asked.
func (s *Store) item(ctx context.Context, r itemRow, v map[string]any, now time.Time, refresh bool, refreshes *[]refreshKey) (*store.Item, error) {
	if v == nil {
		var err error
		if v, err = s.decodeValue(ctx, r.k.NS, r.k.Key, r.value); err != nil {
			return nil, fmt.Errorf("item %q/%q: %w", r.k.NS, r.k.Key, err)
		}
	}
	loc := now.Location()
	it := &store.Item{
		Namespace: store.ParseNamespace(r.k.NS),
		Key:       r.k.Key,
		Value:     v,
		CreatedAt: time.Unix(0, r.created).In(loc),
		UpdatedAt: time.Unix(0, r.updated).In(loc),
	}
	exp := r.expires
	if refresh && r.ttlMinutes.Valid && r.ttlMinutes.Int64 > 0 {
		exp = sql.NullInt64{Int64: now.Add(items.RefreshTTL(int(r.ttlMinutes.Int64))).UnixNano(), Valid: true}
		*refreshes = append(*refreshes, refreshKey{r.k, exp.Int64})
	}
	if exp.Valid {
		it.ExpiresAt = time.Unix(0, exp.Int64).In(loc)
	}
	return it, nil
}

func (s *Store) get(ctx context.Context, tx *sql.Tx, st *readStmts, o store.GetOp, now time.Time, refreshes *[]refreshKey) (*store.Item, error) {
	var (
		rs  *sql.Rows
		err error
	)
	rs, err = tx.StmtContext(ctx, st.getLive).QueryContext(ctx, o.Namespace.String(), o.Key, now.UnixNano())
	if err != nil {
		return nil, err
	}
	defer rs.Close()
	if !rs.Next() {
		return nil, rs.Err()
	}
	r, err := scanItem(rs)
	if err != nil {
		return nil, err
	}
	return s.item(ctx, r, nil, now, s.b.Refresh(o.RefreshTTL), refreshes)
}

func (s *Store) listNamespaces(ctx context.Context, tx *sql.Tx, opt store.ListNamespacesOptions, now time.Time) ([]store.Namespace, error) {
	// The literal labels before the first wildcard narrow the scan.
	var lit store.Namespace
	for _, l := range opt.Prefix {
		if l == "*" {
			break
		}
		lit = append(lit, l)
	}
	cond, args := prefixCond("prefix", lit)
	q := `SELECT DISTINCT prefix FROM store WHERE ` + cond + ` AND (expires_at IS NULL OR expires_at > ?)`
	args = append(args, now.UnixNano())
	rs, err := tx.QueryContext(ctx, q, args...)
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
	if err := rs.Err(); err != nil {
		return nil, err
	}
	return items.ListNamespaces(all, opt), nil
}

// matches applies a validated filter.
func matches(v map[string]any, filter map[string]any) bool {
	if len(filter) == 0 {
		return true
	}
	ok, _ := filtering.MatchFilter(v, filter) // validated in prepare
	return ok
}
