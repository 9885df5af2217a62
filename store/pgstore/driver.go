package pgstore

import (
	"context"
	"fmt"
	"time"

	lru "github.com/hashicorp/golang-lru/v2"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/memvault/memvault/internal/binding"
	"github.com/memvault/memvault/internal/pgcitus"
	"github.com/memvault/memvault/internal/pgdb"
	"github.com/memvault/memvault/store"
	"github.com/memvault/memvault/store/engine"
)

// driver is the PostgreSQL store.Driver: LangGraph's store and
// store_vectors tables on a pool, or (bound) on a caller's transaction.
//
// Its transactions do not begin one on the server: a read runs as one
// statement, and a write transaction queues its rows and sends them at
// Commit as one batch (an implicit transaction: one round trip) or one
// COPY, in the caller's transaction when bound to one. So a read-only
// transaction's statements are each consistent, not all together, and a
// write transaction's reads see the database as it is, not a snapshot:
// what the store did before the driver seam, and what the engine needs
// (its writes are blind upserts, DriverCaps.UpsertVersions; its
// conditional puts one statement, engine.CondTx).
type driver struct {
	db      DB // the pool
	t       tables
	index   *indexSpec    // nil without an index
	codec   binding.Codec // the serializer's (fences); zero without one
	sealed  bool          // values are sealed envelopes (a serializer)
	copyMin int           // items from which a write goes through COPY
	// mode is the exec mode of search queries (0: the pool's own). A
	// pool that caches prepared statements gets QueryExecModeCacheDescribe
	// instead: unnamed statements are planned with their parameters every
	// time, where a cached statement's generic plan cannot see how
	// selective a namespace prefix is and may scan every vector.
	mode pgx.QueryExecMode
	// seenPrefixes holds the prefixes searched lately, to tell the ones
	// searched again (see preparedPrefix); nil when mode is 0.
	seenPrefixes *lru.Cache[string, struct{}]
	iterative    pgdb.Probe       // pgvector has iterative scans
	utf8Server   pgdb.Probe       // server_encoding is UTF8
	topo         pgcitus.Topology // whether db is a Citus coordinator
}

// bound is the driver on a caller's transaction (the …Tx methods).
type bound struct {
	*driver
	tx pgx.Tx
}

func (d *driver) Name() string { return "postgres" }

func (d *driver) Caps() store.DriverCaps {
	return store.DriverCaps{Transactions: true, StatementReads: true, RefreshInView: true, ANN: d.index != nil, UpsertVersions: true, TxRecords: true}
}

// Begin begins nothing on the server (see driver); a read-only and a write
// transaction differ only in what the engine asks of them.
func (d *driver) Begin(ctx context.Context, _ bool) (store.DriverTx, error) {
	return &pgTx{ctx: ctx, d: d, q: d.db, owned: true}, nil
}

func (b bound) Begin(ctx context.Context, _ bool) (store.DriverTx, error) {
	return &pgTx{ctx: ctx, d: b.driver, q: b.tx}, nil
}

// Close does nothing: the pool is the caller's.
func (d *driver) Close() error { return nil }

// ANNPolicy declares how pgvector is asked (engine.ANNDriver).
func (d *driver) ANNPolicy() engine.ANNPolicy {
	return engine.ANNPolicy{MaxCandidates: maxCandidates, PerItem: d.index.estimate, Exhaustive: d.index.kind == Flat}
}

// maxCandidates bounds the index-served query (pgvector's largest
// hnsw.ef_search); beyond it the search is exact.
const maxCandidates = 1000

// pgTx is a transaction of the driver (see driver).
type pgTx struct {
	ctx   context.Context // the operation's, for the statements of Commit
	d     *driver
	q     DB   // the pool, or the caller's transaction
	owned bool // q is the pool: retry what PostgreSQL aborted
	// A write transaction's queued work, sent at Commit.
	puts    []store.RowWrite
	dels    []store.RowKey
	fence   []store.WriteFence
	refresh []store.RowWrite // Row.RowKey and Row.Expires only
	cond    *store.PutCondition
	records []*store.RecordRow // audit records, sent first with the rows
}

// Commit sends the queued refreshes, then the queued rows: one batch, in
// one implicit transaction (or the caller's), or COPY for many.
func (t *pgTx) Commit() error {
	if err := t.flushRefreshes(t.ctx); err != nil || len(t.puts)+len(t.dels) == 0 {
		return err
	}
	r, vecs, now, err := t.d.putRows(t.puts, t.dels)
	if err != nil {
		return err
	}
	r.fence, r.records = t.fence, t.records
	t.puts, t.dels, t.records = nil, nil, nil
	return t.d.write(t.ctx, t.q, t.owned, r, vecs, now)
}

func (t *pgTx) Rollback() error {
	t.puts, t.dels, t.refresh, t.records = nil, nil, nil, nil
	return nil
}

// cols are the columns of a stored row a read selects.
const cols = `s.prefix, s.key, s.value, s.created_at, s.updated_at, s.expires_at, s.ttl_minutes`

// live is the condition that row s is live at parameter $n.
func live(a *args, now time.Time) string {
	return "(s.expires_at IS NULL OR s.expires_at > " + a.add(pgTime(now)) + ")"
}

// rowScanner scans cols (and more destinations) into a row, with no
// allocation per row but the row's own strings and value.
type rowScanner struct {
	r   store.Row
	exp pgtype.Timestamptz
	ttl pgtype.Int4
	dst []any
}

func (s *rowScanner) scan(rows pgx.Rows, more ...any) (store.Row, error) {
	if s.dst == nil {
		s.dst = append([]any{&s.r.NS, &s.r.Key, &s.r.Value, &s.r.Created, &s.r.Updated, &s.exp, &s.ttl}, more...)
	}
	if err := rows.Scan(s.dst...); err != nil {
		return store.Row{}, err
	}
	r := s.r
	r.Created, r.Updated = r.Created.UTC(), r.Updated.UTC()
	if s.exp.Valid {
		r.Expires = s.exp.Time.UTC()
	}
	if s.ttl.Valid {
		r.TTLMinutes = int(s.ttl.Int32)
	}
	return r, nil
}

// query runs sql and appends its rows (cols) to dst.
func (t *pgTx) query(ctx context.Context, dst []store.Row, sql string, a ...any) ([]store.Row, error) {
	rows, err := t.q.Query(ctx, sql, a...)
	if err != nil {
		return dst, err
	}
	defer rows.Close()
	var sc rowScanner
	for rows.Next() {
		r, err := sc.scan(rows)
		if err != nil {
			return dst, err
		}
		dst = append(dst, r)
	}
	return dst, rows.Err()
}

func (t *pgTx) Get(ctx context.Context, k store.RowKey) (store.Row, bool, error) {
	rows, err := t.query(ctx, nil, `SELECT `+cols+` FROM `+t.d.t.store+` s WHERE s.prefix = $1 AND s.key = $2`, k.NS, k.Key)
	if err != nil || len(rows) == 0 {
		return store.Row{}, false, err
	}
	return rows[0], true, nil
}

func (t *pgTx) Rows(ctx context.Context, keys []store.RowKey, dst []store.Row) ([]store.Row, error) {
	t.d.topo.Distributed(ctx, t.d.db) // for ShardFilter
	prefixes, ks := make([]string, len(keys)), make([]string, len(keys))
	for i, k := range keys {
		prefixes[i], ks[i] = k.NS, k.Key
	}
	return t.query(ctx, dst, `SELECT `+cols+` FROM `+t.d.t.store+` s
JOIN unnest($1::text[], $2::text[]) AS r(prefix, key) ON s.prefix = r.prefix AND s.key = r.key
`+t.d.topo.ShardFilter("s.prefix", "$1::text[]"), prefixes, ks)
}

func (t *pgTx) Scan(ctx context.Context, prefix store.Namespace, now time.Time, withoutVectors bool, after *store.ScanAfter, limit int) ([]store.Row, error) {
	return t.ScanFilter(ctx, prefix, now, withoutVectors, after, limit, nil)
}

// ScanFilter implements engine.FilterTx: the filter as JSONB conditions
// (filterSQL).
func (t *pgTx) ScanFilter(ctx context.Context, prefix store.Namespace, now time.Time, withoutVectors bool, after *store.ScanAfter, limit int, filter map[string]any) ([]store.Row, error) {
	var a args
	where := nsCond(&a, "s.prefix", prefix) + " AND " + live(&a, now)
	f, err := filterSQL(&a, "s.value", filter)
	if err != nil {
		return nil, err
	}
	where += " AND " + f
	if withoutVectors && t.d.index != nil {
		where += ` AND NOT EXISTS (SELECT 1 FROM ` + t.d.t.vectors + ` sv
    WHERE sv.prefix = s.prefix AND sv.key = s.key AND sv.embedding IS NOT NULL)`
	}
	if after != nil {
		u, p, k := a.add(pgTime(after.Updated)), a.add(after.NS), a.add(after.Key)
		where += ` AND (s.updated_at < ` + u + ` OR s.updated_at = ` + u + ` AND (s.prefix COLLATE "C" > ` + p +
			` OR s.prefix = ` + p + ` AND s.key COLLATE "C" > ` + k + `))`
	}
	// LIMIT is a literal: with a parameter, a prepared statement's
	// generic plan assumes a large limit and may prefer a sequential scan.
	if t.d.mode != 0 {
		a = append(args{t.d.mode}, a...)
	}
	return t.query(ctx, nil, `SELECT `+cols+` FROM `+t.d.t.store+` s WHERE `+where+`
ORDER BY s.updated_at DESC, s.prefix COLLATE "C", s.key COLLATE "C" LIMIT `+fmt.Sprint(limit), a...)
}

func (t *pgTx) Vectors(ctx context.Context, prefix store.Namespace, now time.Time, fn func(store.RowKey, time.Time, []store.Vector) error) error {
	if t.d.index == nil {
		return nil
	}
	var a args
	// (halfvec casts to real[] through vector.)
	rows, err := t.q.Query(ctx, `SELECT sv.prefix, sv.key, s.updated_at, sv.field_name, sv.embedding::vector::real[]
FROM `+t.d.t.vectors+` sv JOIN `+t.d.t.store+` s ON s.prefix = sv.prefix AND s.key = sv.key
WHERE `+nsCond(&a, "sv.prefix", prefix)+` AND `+live(&a, now)+` AND sv.embedding IS NOT NULL
ORDER BY sv.prefix, sv.key`, a...)
	if err != nil {
		return err
	}
	var (
		k, cur              store.RowKey
		updated, curUpdated time.Time
		v                   store.Vector
		vs                  []store.Vector
	)
	_, err = pgx.ForEachRow(rows, []any{&k.NS, &k.Key, &updated, &v.Field, &v.Vec}, func() error {
		var err error
		if k != cur && len(vs) > 0 {
			err, vs = fn(cur, curUpdated, vs), vs[:0]
		}
		cur, curUpdated, vs = k, updated, append(vs, v)
		v.Vec = nil // scanned into a new slice
		return err
	})
	if err == nil && len(vs) > 0 {
		err = fn(cur, curUpdated, vs)
	}
	return err
}

func (t *pgTx) Page(ctx context.Context, ns, after string, limit int, now time.Time) ([]store.Row, error) {
	var a args
	a = append(a, ns, after, limit)
	return t.query(ctx, nil, `SELECT `+cols+` FROM `+t.d.t.store+` s
WHERE s.prefix = $1 AND s.key COLLATE "C" > $2 AND `+live(&a, now)+`
ORDER BY s.key COLLATE "C" LIMIT $3`, a...)
}

func (t *pgTx) Namespaces(ctx context.Context, prefix store.Namespace, now time.Time) ([]store.Namespace, error) {
	var a args
	rows, err := t.q.Query(ctx, `SELECT DISTINCT s.prefix FROM `+t.d.t.store+` s WHERE `+nsCond(&a, "s.prefix", prefix)+` AND `+live(&a, now), a...)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (store.Namespace, error) {
		var p string
		err := r.Scan(&p)
		return store.ParseNamespace(p), err
	})
}

// Refresh queues an expiry, set at Commit with the others in one UPDATE.
func (t *pgTx) Refresh(_ context.Context, k store.RowKey, expires time.Time) error {
	t.refresh = append(t.refresh, store.RowWrite{Row: store.Row{RowKey: k, Expires: expires}})
	return nil
}

func (t *pgTx) flushRefreshes(ctx context.Context) error {
	if len(t.refresh) == 0 {
		return nil
	}
	t.d.topo.Distributed(ctx, t.d.db) // for ShardFilter
	prefixes, keys, exps := make([]string, len(t.refresh)), make([]string, len(t.refresh)), make([]time.Time, len(t.refresh))
	for i, r := range t.refresh {
		prefixes[i], keys[i], exps[i] = r.NS, r.Key, r.Expires
	}
	t.refresh = nil
	_, err := t.q.Exec(ctx, `UPDATE `+t.d.t.store+` s SET expires_at = r.exp
FROM unnest($1::text[], $2::text[], $3::timestamptz[]) AS r(prefix, key, exp)
WHERE s.prefix = r.prefix AND s.key = r.key AND s.ttl_minutes IS NOT NULL
`+t.d.topo.ShardFilter("s.prefix", "$1::text[]"), prefixes, keys, exps)
	if err != nil {
		return fmt.Errorf("refresh ttl: %w", err)
	}
	return nil
}

// DeletePrefix deletes in one statement; the vectors go with their items
// (ON DELETE CASCADE).
func (t *pgTx) DeletePrefix(ctx context.Context, prefix store.Namespace) (int, error) {
	var a args
	tag, err := t.q.Exec(ctx, `DELETE FROM `+t.d.t.store+` s WHERE `+nsCond(&a, "s.prefix", prefix), a...)
	return int(tag.RowsAffected()), err
}

func (t *pgTx) DeleteExpired(ctx context.Context, now time.Time) ([]store.RowKey, error) {
	rows, err := t.q.Query(ctx, `DELETE FROM `+t.d.t.store+` WHERE expires_at IS NOT NULL AND expires_at < $1 RETURNING prefix, key`, pgTime(now))
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (store.RowKey, error) {
		var k store.RowKey
		err := r.Scan(&k.NS, &k.Key)
		return k, err
	})
}

// iterativeScans reports whether the server's pgvector (0.8 or later) has
// iterative index scans; it asks once.
func (d *driver) iterativeScans(ctx context.Context) bool {
	ok, _ := d.iterative.Ask(ctx, d.db, `SELECT coalesce(string_to_array(extversion, '.')::int[] >= '{0,8}', false)
FROM pg_extension WHERE extname = 'vector'`)
	return ok
}

// serverUTF8 reports whether the server encoding is UTF8; it asks once.
func (d *driver) serverUTF8(ctx context.Context) bool {
	ok, _ := d.utf8Server.Ask(ctx, d.db, `SELECT current_setting('server_encoding') = 'UTF8'`)
	return ok
}

var (
	_ engine.ANNTx    = (*pgTx)(nil)
	_ engine.FilterTx = (*pgTx)(nil)
	_ engine.FenceTx  = (*pgTx)(nil)
	_ engine.CondTx   = (*pgTx)(nil)
)
