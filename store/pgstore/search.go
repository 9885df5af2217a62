package pgstore

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/memvault/memvault/store"
	"github.com/memvault/memvault/store/engine"
	"github.com/memvault/memvault/store/vecindex"
)

// Nearest implements engine.ANNTx: the query vector goes through an
// approximate nearest neighbour query the HNSW or IVFFlat index serves
// (or an exact scan of a flat table):
//
//	SELECT prefix, key, embedding <=> $q FROM store_vectors
//	WHERE <prefix> ORDER BY embedding <=> $q LIMIT n
//
// each candidate joined with its item's row by primary key, the value
// only when the item is live and passes the filter (as JSONB conditions).
// How many candidates, when to widen and when to rank exactly instead are
// the engine's (Engine.ann); the index settings of a query (ef_search,
// probes, iterative scans when widening) are the driver's (annSettings).
func (t *pgTx) Nearest(ctx context.Context, q engine.ANNQuery) ([]engine.Candidate, int, error) {
	d := t.d
	literalCond, prepared := d.preparedPrefix(ctx, q.Prefix)
	sql, a, err := d.buildQuery(q.Filter, q.Now, d.annQuery(q.Prefix, d.vectorParam(q.Vector), q.N, literalCond, d.topo.Distributed(ctx, d.db)))
	if err != nil {
		return nil, 0, err
	}
	var cands []engine.Candidate
	got, err := d.queryPage(ctx, t.q, d.annSettings(ctx, q.N, q.Widen), prepared, sql, a, func(r *store.Row, dist *float64) {
		if dist == nil {
			return // a NULL embedding (LangGraph allows them)
		}
		c := engine.Candidate{Scored: vecindex.Scored{Key: r.RowKey, Updated: r.Updated.UnixNano(), Score: d.score(*dist)}}
		if r.Value != nil {
			c.Row = r
		}
		cands = append(cands, c)
	})
	return cands, got, err
}

// buildQuery completes the query build makes with the expiry and filter
// conditions on the store row s.
func (d *driver) buildQuery(filter map[string]any, now time.Time, build func(a *args, where string) string) (string, args, error) {
	var a args
	where := live(&a, now)
	f, err := filterSQL(&a, "s.value", filter)
	if err != nil {
		return "", nil, err
	}
	return build(&a, where+" AND "+f), a, nil
}

// annQuery builds the index-served query over n candidates: every
// candidate with its item's metadata, and its value only when the item
// passes the filter and expiry conditions (value is NOT NULL, so a NULL
// marks a candidate that does not). The prefix condition is literalCond
// when given (see preparedPrefix), else nsCond's, with parameters.
//
// citus selects the one variant of the store's statements for a Citus
// coordinator: the item lookup without its LIMIT 1. Citus refuses a LIMIT
// (or OFFSET) in a lateral subquery that references the candidates, a
// subquery it must gather from every shard first (0A000 "cannot push down
// this subquery"); without it, Citus gathers the candidates and joins them
// with store shard by shard, colocated (prefix, key). On plain PostgreSQL
// the LIMIT 1 stays: without it the planner flattens the lateral subquery
// into a join and may hash the whole store table.
func (d *driver) annQuery(prefix store.Namespace, qvec any, n int, literalCond string, citus bool) func(a *args, where string) string {
	return func(a *args, where string) string {
		q := a.add(qvec)
		cond := literalCond
		if cond == "" {
			cond = nsCond(a, "sv.prefix", prefix)
		}
		limit1 := " LIMIT 1"
		if citus {
			limit1 = ""
		}
		vec := q + "::" + d.index.vecType
		return `SELECT v.prefix, v.key, CASE WHEN ` + where + ` THEN s.value END,
    s.created_at, s.updated_at, s.expires_at, s.ttl_minutes, v.dist
FROM (
    SELECT sv.prefix, sv.key, sv.embedding ` + d.index.op + ` ` + vec + ` AS dist
    FROM ` + d.t.vectors + ` sv
    WHERE ` + cond + `
    ORDER BY sv.embedding ` + d.index.op + ` ` + vec + `
    LIMIT ` + strconv.Itoa(n) + `
) v CROSS JOIN LATERAL (
    -- LIMIT 1 keeps this a per-candidate primary key lookup: as a plain
    -- join the planner may hash the whole store table.
    SELECT * FROM ` + d.t.store + ` s WHERE s.prefix = v.prefix AND s.key = v.key` + limit1 + `) s`
	}
}

// annSettings are the index settings for a query over n candidates:
// HNSW's ef_search at least n (pgvector caps it at 1000), IVFFlat's probes.
// When widening (a first query under a prefix found too few), pgvector
// 0.8's iterative index scans too, so that the index keeps looking until n
// candidates pass the prefix. A first query with default settings needs
// none, and runs as a single statement.
func (d *driver) annSettings(ctx context.Context, n int, widen bool) [][2]string {
	var out [][2]string
	switch d.index.kind {
	case HNSW:
		ef := d.index.efSearch
		if n > ef {
			ef = min(n, 1000)
		}
		if ef != 40 {
			out = append(out, [2]string{"hnsw.ef_search", strconv.Itoa(ef)})
		}
		if widen && d.iterativeScans(ctx) {
			out = append(out, [2]string{"hnsw.iterative_scan", "relaxed_order"})
		}
	case IVFFlat:
		if d.index.probes != 1 {
			out = append(out, [2]string{"ivfflat.probes", strconv.Itoa(d.index.probes)})
		}
		if widen && d.iterativeScans(ctx) {
			out = append(out, [2]string{"ivfflat.iterative_scan", "relaxed_order"})
		}
	}
	return out
}

// queryPage runs sql with args on q and calls f per row; it returns the
// number of rows read. With settings, the query runs in a transaction that
// applies them first (set_config(..., true) lasts until its end). A
// prepared query runs in the pool's own mode (a cached prepared
// statement); others in d.mode.
func (d *driver) queryPage(ctx context.Context, q DB, settings [][2]string, prepared bool, sql string, a args, f func(r *store.Row, dist *float64)) (int, error) {
	if d.mode != 0 && !prepared {
		a = append(args{d.mode}, a...)
	}
	if len(settings) == 0 {
		return scanRows(ctx, q, sql, a, f)
	}
	tx, err := q.Begin(ctx)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback(context.WithoutCancel(ctx)) //nolint:errcheck // read-only; after Commit a no-op
	var set strings.Builder
	var sa []any
	set.WriteString("SELECT ")
	for i, kv := range settings {
		if i > 0 {
			set.WriteString(", ")
		}
		fmt.Fprintf(&set, "set_config($%d, $%d, true)", 2*i+1, 2*i+2)
		sa = append(sa, kv[0], kv[1])
	}
	if _, err := tx.Exec(ctx, set.String(), sa...); err != nil {
		return 0, fmt.Errorf("search settings: %w", err)
	}
	n, err := scanRows(ctx, tx, sql, a, f)
	if err != nil {
		return n, err
	}
	return n, tx.Commit(ctx)
}

func scanRows(ctx context.Context, q Querier, sql string, a args, f func(*store.Row, *float64)) (int, error) {
	rows, err := q.Query(ctx, sql, a...)
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	n := 0
	var (
		dist pgtype.Float8
		sc   rowScanner
	)
	for rows.Next() {
		n++
		r, err := sc.scan(rows, &dist)
		if err != nil {
			return n, err
		}
		var d *float64
		if dist.Valid {
			d = &dist.Float64
		}
		f(&r, d)
	}
	return n, rows.Err()
}

// score turns a pgvector distance into the item's score.
func (d *driver) score(dist float64) float64 {
	var sc float64
	switch d.index.op {
	case "<=>":
		sc = 1 - dist
	default: // <-> is the distance, <#> the negative dot product
		sc = -dist
	}
	if math.IsNaN(sc) {
		return 0 // cosine with an all-zero vector, as indexing.Score
	}
	return sc
}

// seenPrefixesSize is how many recently searched prefixes a driver
// remembers to tell the ones searched again.
const seenPrefixesSize = 256

// preparedPrefix reports whether the index-served query under prefix runs
// as a cached prepared statement with the prefix written into its text,
// rather than as an unnamed statement planned with its parameters, and
// returns the condition on sv.prefix to write when it does.
//
// Why both: the planner must see the prefix to choose between the vector
// index (broad prefix) and an exact scan of the prefix's rows (selective
// prefix); a cached statement with the prefix as a parameter gets a
// generic plan that guesses its selectivity and may read every vector
// under a broad one. So statements are planned with their parameters, and
// parsing and planning that query every time costs about as much as
// running it. A prefix written as a constant gives a cached statement
// planned for that prefix, until ANALYZE or DDL replans it: the second and
// later searches of the prefix skip parsing and planning. Only a prefix
// searched again among the last seenPrefixesSize gets one, so that an
// application searching many distinct prefixes does not fill each
// connection's statement cache (shared with every other statement on the
// pool) with statements used once. Pools that do not cache statements
// (pgx's exec or simple-protocol modes, transaction poolers) and
// transactions never get one; nor do prefixes longer than
// maxLiteralPrefix bytes (statement text and cache memory), nor non-ASCII
// prefixes unless the server encoding is UTF8 (a SQL_ASCII server refuses
// Unicode escapes).
func (d *driver) preparedPrefix(ctx context.Context, prefix store.Namespace) (cond string, ok bool) {
	if d.seenPrefixes == nil {
		return "", false
	}
	if len(prefix) == 0 {
		return "TRUE", true // one statement, and no parameter sways its plan
	}
	key := prefix.String()
	if len(key) > maxLiteralPrefix {
		return "", false
	}
	if _, seen := d.seenPrefixes.Get(key); !seen {
		d.seenPrefixes.Add(key, struct{}{})
		return "", false
	}
	if !isASCII(key) && !d.serverUTF8(ctx) {
		return "", false
	}
	return nsCondLiteral("sv.prefix", prefix)
}

// maxLiteralPrefix is the longest prefix (in bytes) written into a cached
// statement.
const maxLiteralPrefix = 512

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// Scores implements engine.ScoreTx: each live item's best distance under
// prefix, one row per item, in one query. Each vector is compared with
// the query of its space (a VALUES table q of the spaces' queries, joined
// by the space's label); no ANN index serves it, but it reads the prefix's
// vectors once rather than a lookup per item.
func (t *pgTx) Scores(ctx context.Context, prefix store.Namespace, sq engine.SpaceQueries, now time.Time, limit int, fn func(vecindex.Scored)) error {
	d := t.d
	var a args
	names, vecs := []string{""}, []string{vectorText(sq.Shared)}
	for subject, v := range sq.Subjects {
		if v != nil { // nil: its keys are gone, its vectors score nothing
			names, vecs = append(names, subject), append(vecs, vectorText(v))
		}
	}
	// An undefined distance (a cosine with an all-zero vector) scores 0:
	// it ranks as the distance that scores 0.
	space, nan := "''", map[bool]string{true: "1", false: "0"}[d.index.op == "<=>"]
	if len(sq.SubjectPrefix) > 0 {
		space = `CASE WHEN starts_with(sv.prefix, ` + a.add(sq.SubjectPrefix.String()+".") + `) THEN split_part(sv.prefix, '.', ` +
			strconv.Itoa(len(sq.SubjectPrefix)+1) + `) ELSE '' END`
	}
	sql := `WITH q AS MATERIALIZED (SELECT u.space, u.vec::` + d.index.vecType + ` AS vec
    FROM unnest(` + a.add(names) + `::text[], ` + a.add(vecs) + `::text[]) AS u(space, vec)),
d AS MATERIALIZED (
    SELECT sv.prefix, sv.key, min(sv.embedding ` + d.index.op + ` q.vec) AS dist, bool_or(q.vec IS NULL) AS lost
    FROM ` + d.t.vectors + ` sv LEFT JOIN q ON q.space = (` + space + `)
    WHERE ` + nsCond(&a, "sv.prefix", prefix) + ` AND sv.embedding IS NOT NULL
    GROUP BY sv.prefix, sv.key)
SELECT d.prefix, d.key, s.updated_at, d.dist FROM d JOIN ` + d.t.store + ` s ON s.prefix = d.prefix AND s.key = d.key
WHERE NOT d.lost AND ` + live(&a, now) + `
ORDER BY CASE WHEN d.dist = 'NaN' THEN ` + nan + ` ELSE d.dist END, s.updated_at DESC, d.prefix COLLATE "C", d.key COLLATE "C"
LIMIT ` + a.add(limit)
	if d.mode != 0 {
		a = append(args{d.mode}, a...)
	}
	rows, err := t.q.Query(ctx, sql, a...)
	if err != nil {
		return err
	}
	var (
		c       vecindex.Scored
		updated time.Time
		dist    float64
	)
	_, err = pgx.ForEachRow(rows, []any{&c.Key.NS, &c.Key.Key, &updated, &dist}, func() error {
		c.Updated, c.Score = updated.UnixNano(), d.score(dist)
		fn(c)
		return nil
	})
	return err
}
