package postgres

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/memvault/memvault/store/internal/filtering"
	"github.com/memvault/memvault/store/internal/items"

	"github.com/jackc/pgx/v5"

	"github.com/memvault/memvault/store"
)

// Search lists items under prefix (see store.Store).
//
// Without a query (or without an index) items come newest update first.
// With per-subject keys, each data subject's vectors are in a space of
// their own (see package store/internal/spaces): a search under one
// subject's namespace, or under a namespace that holds no subject's items,
// runs as below with its query moved into that space; one whose prefix
// spans several subjects runs the exact query of spacesQuery, which
// compares each item's vectors with the query in the item's space.
// With a query, the query vector goes through an approximate nearest
// neighbour query the HNSW or IVFFlat index serves:
//
//	SELECT prefix, key, embedding <=> $q FROM store_vectors
//	WHERE <prefix> ORDER BY embedding <=> $q LIMIT n
//
// with n = offset+limit+1 (items with one vector; +10 with a filter) or
// (offset+limit) × vectors-per-item × 2 + 1 (or 10); then each item's best
// field, joined with store by primary key, filtered and paged. When too few candidates pass,
// it asks again for 4n (up to 1000), with ef_search raised and pgvector's
// iterative scans; when that cannot settle the page either (few items, a
// very selective prefix or filter), it falls back to an exact query over
// the items under the prefix, which also appends the items without vectors
// after the scored ones, in the no-query order. Filters run in SQL, or,
// with a Serde, in Go after decryption, fetching rows in chunks until the
// page is full.
func (s *Store) Search(ctx context.Context, prefix store.Namespace, opt store.SearchOptions) ([]store.SearchItem, error) {
	if err := s.b.Check(ctx); err != nil {
		return nil, err
	}
	if err := prefix.ValidatePrefix(); err != nil {
		return nil, err
	}
	if err := items.CheckSearch(opt); err != nil {
		return nil, err
	}
	var (
		qvec any
		sq   *spaceQueries
	)
	if opt.Query != "" && s.index != nil {
		q, err := s.embedQuery(ctx, opt.Query)
		if err != nil {
			return nil, err
		}
		sq, q, err = s.spaceQueries(ctx, prefix, q)
		if err != nil {
			return nil, err
		}
		if sq == nil {
			qvec = s.vectorParam(q)
		}
	}
	return s.search(ctx, prefix, opt, qvec, sq)
}

func (s *Store) search(ctx context.Context, prefix store.Namespace, opt store.SearchOptions, qvec any, sq *spaceQueries) ([]store.SearchItem, error) {
	now := s.nowUTC()
	var (
		hits []hit
		err  error
	)
	switch {
	case sq != nil:
		hits, err = s.collect(ctx, opt, now, true, s.spacesQuery(prefix, sq), nil)
	case qvec == nil:
		hits, err = s.collect(ctx, opt, now, false, func(a *args, where string) string {
			return `SELECT s.prefix, s.key, s.value, s.created_at, s.updated_at, s.expires_at, s.ttl_minutes, NULL::float8
FROM ` + s.t.store + ` s
WHERE ` + nsCond(a, "s.prefix", prefix) + ` AND ` + where + `
ORDER BY s.updated_at DESC, s.prefix COLLATE "C", s.key COLLATE "C"`
		}, nil)
	default:
		var full bool
		hits, full, err = s.searchANN(ctx, prefix, opt, qvec, now)
		if err == nil && !full {
			s.exactSearches.Add(1)
			hits, err = s.collect(ctx, opt, now, true, func(a *args, where string) string {
				q := a.add(qvec)
				return `SELECT s.prefix, s.key, s.value, s.created_at, s.updated_at, s.expires_at, s.ttl_minutes, v.dist
FROM ` + s.t.store + ` s
LEFT JOIN LATERAL (
    SELECT min(sv.embedding ` + s.index.op + ` ` + q + `::` + s.index.vecType + `) AS dist
    FROM ` + s.t.vectors + ` sv WHERE sv.prefix = s.prefix AND sv.key = s.key) v ON TRUE
WHERE ` + nsCond(a, "s.prefix", prefix) + ` AND ` + where + `
ORDER BY v.dist ASC NULLS LAST, s.updated_at DESC, s.prefix COLLATE "C", s.key COLLATE "C"`
			}, nil)
		}
	}
	if err != nil {
		return nil, err
	}
	found := make([]store.SearchItem, len(hits))
	for i, h := range hits {
		found[i] = h.item
	}
	if s.b.Refresh(opt.RefreshTTL) {
		if err := s.refreshItems(ctx, found, now); err != nil {
			return nil, err
		}
		for i, h := range hits {
			if h.ttlMinutes > 0 {
				found[i].ExpiresAt = now.Add(items.RefreshTTL(h.ttlMinutes))
			}
		}
	}
	return found, nil
}

// searchANN is the index-served query; full reports whether it settled
// the page. It reads all n candidates (values only of those that pass the
// SQL filter), ranks them, keeps each item's best vector and pages in Go.
// When too few candidates pass and the index has more, it asks again for
// four times as many, up to maxCandidates.
func (s *Store) searchANN(ctx context.Context, prefix store.Namespace, opt store.SearchOptions, qvec any, now time.Time) ([]hit, bool, error) {
	limit, offset := opt.EffectiveLimit(), opt.Offset
	if offset+limit >= maxCandidates {
		return nil, false, nil // more than the index serves: go exact
	}
	n := min(candidates(offset+limit, s.index.estimate, len(opt.Filter) > 0 || s.opts.TTL != nil), maxCandidates)
	first := n
	literalCond, prepared := s.preparedPrefix(ctx, prefix)
	for {
		sql, a, goFilter, err := s.buildQuery(opt, now, s.annQuery(prefix, qvec, n, literalCond))
		if err != nil {
			return nil, false, err
		}
		var cands []row
		settings := s.annSettings(ctx, n, len(prefix) > 0 && n > first)
		got, err := s.queryPage(ctx, settings, prepared, sql, a, func(r *row) (bool, error) {
			if r.dist == nil {
				return true, nil // a NULL embedding (LangGraph allows them)
			}
			c := *r
			c.raw = bytes.Clone(r.raw)
			cands = append(cands, c)
			return true, nil
		})
		if err != nil {
			return nil, false, err
		}
		// Nearest first; ties as the exact query orders them.
		slices.SortFunc(cands, func(x, y row) int {
			if c := cmp.Compare(*x.dist, *y.dist); c != 0 {
				return c
			}
			if c := y.updated.Compare(x.updated); c != 0 {
				return c
			}
			if c := strings.Compare(x.prefix, y.prefix); c != 0 {
				return c
			}
			return strings.Compare(x.key, y.key)
		})
		seen := make(map[itemKey]bool, len(cands))
		page := make([]hit, 0, min(limit, len(cands)))
		matched := 0
		for i := range cands {
			c := &cands[i]
			k := itemKey{c.prefix, c.key}
			if seen[k] {
				continue // an item counts once, by its best vector
			}
			seen[k] = true
			if c.raw == nil {
				continue // fails the SQL filter or expired
			}
			if !goFilter && matched < offset {
				matched++
				continue
			}
			h, err := s.rowItem(ctx, c, true)
			if err != nil {
				return nil, false, err
			}
			if goFilter {
				ok, err := filtering.MatchFilter(h.item.Value, opt.Filter)
				if err != nil {
					return nil, false, err
				}
				if !ok {
					continue
				}
				if matched < offset {
					matched++
					continue
				}
			}
			page = append(page, h)
			if len(page) == limit {
				break
			}
		}
		if len(page) == limit {
			// Items tied with the page's last one may lie beyond the
			// candidates: the page is settled when its last distance is
			// below the farthest candidate's. A tie (the same memory
			// stored twice is common) asks for more candidates first:
			// going exact at once made every search whose page ended
			// on a duplicate scan the whole table.
			if page[limit-1].dist < *cands[len(cands)-1].dist {
				return page, true, nil
			}
			if got < n || n >= maxCandidates {
				return page, false, nil
			}
			n = min(4*n, maxCandidates)
			continue
		}
		if got < n || n >= maxCandidates {
			return nil, false, nil // the index has no more: go exact
		}
		n = min(4*n, maxCandidates)
		if s.index.kind == Flat {
			// Without an index every query reads all vectors: one more,
			// for as many candidates as allowed.
			n = maxCandidates
		}
	}
}

// candidates is how many vectors the first index-served query asks for to
// fill offset+limit items. Items with one vector need one more than the
// page (to tell whether items beyond tie with its last one), plus slack
// when a filter may drop some; items with several need twice their
// vectors (an item counts once, by its best field).
func candidates(items, perItem int, filtered bool) int {
	slack := 1
	if filtered {
		slack = 10
	}
	if perItem <= 1 {
		return items + slack
	}
	return items*perItem*2 + slack
}

// maxCandidates bounds the index-served query (pgvector's largest
// hnsw.ef_search); beyond it the search is exact.
const maxCandidates = 1000

// annQuery builds the index-served query over n candidates: every
// candidate with its item's metadata, and its value only when the item
// passes the filter and expiry conditions (value is NOT NULL, so a NULL
// marks a candidate that does not). The prefix condition is literalCond
// when given (see preparedPrefix), else nsCond's, with parameters.
func (s *Store) annQuery(prefix store.Namespace, qvec any, n int, literalCond string) func(a *args, where string) string {
	return func(a *args, where string) string {
		q := a.add(qvec)
		cond := literalCond
		if cond == "" {
			cond = nsCond(a, "sv.prefix", prefix)
		}
		vec := q + "::" + s.index.vecType
		return `SELECT v.prefix, v.key, CASE WHEN ` + where + ` THEN s.value END,
    s.created_at, s.updated_at, s.expires_at, s.ttl_minutes, v.dist
FROM (
    SELECT sv.prefix, sv.key, sv.embedding ` + s.index.op + ` ` + vec + ` AS dist
    FROM ` + s.t.vectors + ` sv
    WHERE ` + cond + `
    ORDER BY sv.embedding ` + s.index.op + ` ` + vec + `
    LIMIT ` + strconv.Itoa(n) + `
) v CROSS JOIN LATERAL (
    -- LIMIT 1 keeps this a per-candidate primary key lookup: as a plain
    -- join the planner may hash the whole store table.
    SELECT * FROM ` + s.t.store + ` s WHERE s.prefix = v.prefix AND s.key = v.key LIMIT 1) s`
	}
}

// annSettings are the index settings for a query over n candidates:
// HNSW's ef_search at least n (pgvector caps it at 1000), IVFFlat's probes.
// When widening (a first query under a prefix found too few), pgvector
// 0.8's iterative index scans too, so that the index keeps looking until n
// candidates pass the prefix. A first query with default settings needs
// none, and runs as a single statement.
func (s *Store) annSettings(ctx context.Context, n int, widen bool) [][2]string {
	var out [][2]string
	switch s.index.kind {
	case HNSW:
		ef := s.index.efSearch
		if n > ef {
			ef = min(n, 1000)
		}
		if ef != 40 {
			out = append(out, [2]string{"hnsw.ef_search", strconv.Itoa(ef)})
		}
		if widen && s.iterativeScans(ctx) {
			out = append(out, [2]string{"hnsw.iterative_scan", "relaxed_order"})
		}
	case IVFFlat:
		if s.index.probes != 1 {
			out = append(out, [2]string{"ivfflat.probes", strconv.Itoa(s.index.probes)})
		}
		if widen && s.iterativeScans(ctx) {
			out = append(out, [2]string{"ivfflat.iterative_scan", "relaxed_order"})
		}
	}
	return out
}

// collect runs the query build makes (rows in final order, without LIMIT)
// and returns the page [offset, offset+limit). build gets the args to add
// its parameters to and the SQL condition of the filter and expiry ("TRUE"
// when there is none) for the store row s.
//
// When filters run in SQL the page is cut by LIMIT/OFFSET. When they run in
// Go (values encrypted), rows are fetched in growing chunks, decrypted and
// filtered, until the page is full or the rows run out.
func (s *Store) collect(ctx context.Context, opt store.SearchOptions, now time.Time, scored bool,
	build func(a *args, where string) string, settings [][2]string) ([]hit, error) {
	limit, offset := opt.EffectiveLimit(), opt.Offset
	sql, a, goFilter, err := s.buildQuery(opt, now, build)
	if err != nil {
		return nil, err
	}
	// LIMIT and OFFSET are literals: with parameters, a prepared
	// statement's generic plan assumes a large limit and may prefer a
	// sequential scan to the index.
	page := func(limit, offset int) string {
		return sql + " LIMIT " + strconv.Itoa(limit) + " OFFSET " + strconv.Itoa(offset)
	}

	out := []hit{}
	if !goFilter {
		_, err := s.queryPage(ctx, settings, false, page(limit, offset), a, func(r *row) (bool, error) {
			it, err := s.rowItem(ctx, r, scored)
			if err != nil {
				return false, err
			}
			out = append(out, it)
			return true, nil
		})
		return out, err
	}

	chunk := min(max(2*(offset+limit), 64), 4096)
	skipped := 0
	for pos := 0; ; {
		n, err := s.queryPage(ctx, settings, false, page(chunk, pos), a, func(r *row) (bool, error) {
			it, err := s.rowItem(ctx, r, scored)
			if err != nil {
				return false, err
			}
			ok, err := filtering.MatchFilter(it.item.Value, opt.Filter)
			if err != nil || !ok {
				return err == nil, err
			}
			if skipped < offset {
				skipped++
				return true, nil
			}
			out = append(out, it)
			return len(out) < limit, nil
		})
		if err != nil {
			return nil, err
		}
		if len(out) == limit || n < chunk {
			return out, nil
		}
		pos += chunk
		chunk = min(chunk*2, 4096)
	}
}

// buildQuery completes the query build makes with the expiry and filter
// conditions. goFilter reports whether the filter is left to Go.
func (s *Store) buildQuery(opt store.SearchOptions, now time.Time, build func(a *args, where string) string) (string, args, bool, error) {
	goFilter := s.opts.Serde != nil && len(opt.Filter) > 0
	var a args
	where := "(s.expires_at IS NULL OR s.expires_at > " + a.add(now) + ")"
	if !goFilter {
		f, err := filterSQL(&a, "s.value", opt.Filter)
		if err != nil {
			return "", nil, false, err
		}
		where += " AND " + f
	}
	return build(&a, where), a, goFilter, nil
}

// row is one scanned search row.
type row struct {
	prefix, key      string
	raw              []byte
	created, updated time.Time
	expires          *time.Time
	ttlMinutes       *int32
	dist             *float64
}

// queryPage runs sql with args and calls f per row until f returns false;
// it returns the number of rows read. With settings, the query runs in a
// transaction that applies them first (set_config(..., true) lasts until
// its end).
// A prepared query runs in the pool's own mode (a cached prepared
// statement); others in s.mode.
func (s *Store) queryPage(ctx context.Context, settings [][2]string, prepared bool, sql string, a args, f func(*row) (bool, error)) (int, error) {
	if s.mode != 0 && !prepared {
		a = append(args{s.mode}, a...)
	}
	if len(settings) == 0 {
		rows, err := s.db.Query(ctx, sql, a...)
		if err != nil {
			return 0, fmt.Errorf("postgres: search: %w", err)
		}
		return scanRows(rows, f)
	}
	tx, err := s.db.Begin(ctx)
	if err != nil {
		return 0, fmt.Errorf("postgres: search: %w", err)
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
		return 0, fmt.Errorf("postgres: search settings: %w", err)
	}
	rows, err := tx.Query(ctx, sql, a...)
	if err != nil {
		return 0, fmt.Errorf("postgres: search: %w", err)
	}
	n, err := scanRows(rows, f)
	if err != nil {
		return n, err
	}
	if err := tx.Commit(ctx); err != nil {
		return n, fmt.Errorf("postgres: search: %w", err)
	}
	return n, nil
}

func scanRows(rows pgx.Rows, f func(*row) (bool, error)) (int, error) {
	defer rows.Close()
	n := 0
	var r row
	for rows.Next() {
		n++
		if err := rows.Scan(&r.prefix, &r.key, &r.raw, &r.created, &r.updated, &r.expires, &r.ttlMinutes, &r.dist); err != nil {
			return n, fmt.Errorf("postgres: search: %w", err)
		}
		more, err := f(&r)
		if err != nil {
			return n, err
		}
		if !more {
			return n, nil
		}
	}
	if err := rows.Err(); err != nil {
		return n, fmt.Errorf("postgres: search: %w", err)
	}
	return n, nil
}

// hit is a search result with the item's TTL in minutes (0: none) and,
// when scored, its distance.
type hit struct {
	item       store.SearchItem
	ttlMinutes int
	dist       float64
}

// rowItem decodes a row into a search item.
func (s *Store) rowItem(ctx context.Context, r *row, scored bool) (hit, error) {
	v, err := s.decodeValue(ctx, r.prefix, r.key, r.raw)
	if err != nil {
		return hit{}, err
	}
	it := store.SearchItem{Item: store.Item{
		Namespace: store.ParseNamespace(r.prefix),
		Key:       r.key,
		Value:     v,
		CreatedAt: r.created.UTC(),
		UpdatedAt: r.updated.UTC(),
	}}
	if r.expires != nil {
		it.ExpiresAt = r.expires.UTC()
	}
	h := hit{item: it}
	if r.ttlMinutes != nil {
		h.ttlMinutes = int(*r.ttlMinutes)
	}
	if scored && r.dist != nil {
		sc := s.score(*r.dist)
		h.item.Score = &sc
		h.dist = *r.dist
	}
	return h, nil
}

// score turns a pgvector distance into the item's score.
func (s *Store) score(d float64) float64 {
	var sc float64
	switch s.index.op {
	case "<=>":
		sc = 1 - d
	default: // <-> is the distance, <#> the negative dot product
		sc = -d
	}
	if math.IsNaN(sc) {
		return 0 // cosine with an all-zero vector, as indexing.Score
	}
	return sc
}

// seenPrefixesSize is how many recently searched prefixes a Store
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
func (s *Store) preparedPrefix(ctx context.Context, prefix store.Namespace) (cond string, ok bool) {
	if s.seenPrefixes == nil {
		return "", false
	}
	if len(prefix) == 0 {
		return "TRUE", true // one statement, and no parameter sways its plan
	}
	key := prefix.String()
	if len(key) > maxLiteralPrefix {
		return "", false
	}
	if _, seen := s.seenPrefixes.Get(key); !seen {
		s.seenPrefixes.Add(key, struct{}{})
		return "", false
	}
	if !isASCII(key) && !s.serverUTF8(ctx) {
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
