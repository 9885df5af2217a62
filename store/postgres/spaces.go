package postgres

import (
	"context"
	"fmt"
	"strconv"

	"github.com/memvault/memvault/store"
)

// spaceQueries is a search's query in each vector space it meets when
// that is not one (see package spaces): the search's prefix spans several
// data subjects, each with vectors in a space of its own, or lies in the
// space of a subject whose keys are gone (no space: nothing scores).
type spaceQueries struct {
	names []string // "" is the shared space
	vecs  []string // the query in each, in pgvector's text form
	// dotted is the subjects' namespace prefix with its trailing dot
	// ("users."), part is the label of a namespace that names its
	// subject (split_part's index, from 1); dotted "" when no namespace
	// under the search's prefix has a subject.
	dotted string
	part   int
}

// spaceQueries returns the queries of a search under prefix whose query
// (in the shared space) is base, or nil when the search meets one space
// only: then vec is its query, as before spaces.
func (s *Store) spaceQueries(ctx context.Context, prefix store.Namespace, base []float32) (sq *spaceQueries, vec []float32, err error) {
	q := s.b.Spaces.NewQuery(base)
	vec, single, err := q.Single(ctx, prefix)
	if err != nil {
		return nil, nil, fmt.Errorf("postgres: search: %w", err)
	}
	if single && vec != nil {
		return nil, vec, nil
	}
	sq = &spaceQueries{}
	if single {
		return sq, nil, nil // the subject's keys are gone
	}
	// Every subject with vectors under the prefix, and the shared space.
	sp := q.SubjectPrefix()
	sq.dotted, sq.part = sp.String()+".", len(sp)+1
	var a args
	rows, err := s.db.Query(ctx, `SELECT DISTINCT split_part(prefix, '.', `+strconv.Itoa(sq.part)+`) FROM `+s.t.vectors+`
WHERE `+nsCond(&a, "prefix", prefix)+` AND starts_with(prefix, `+a.add(sq.dotted)+`)`, a...)
	if err != nil {
		return nil, nil, fmt.Errorf("postgres: search: %w", err)
	}
	var subjects []string
	for rows.Next() {
		var subject string
		if err := rows.Scan(&subject); err != nil {
			rows.Close()
			return nil, nil, fmt.Errorf("postgres: search: %w", err)
		}
		subjects = append(subjects, subject)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, nil, fmt.Errorf("postgres: search: %w", err)
	}
	sq.names, sq.vecs = append(sq.names, ""), append(sq.vecs, vectorText(base))
	for _, subject := range subjects {
		v, err := q.Vector(ctx, subject)
		if err != nil {
			return nil, nil, fmt.Errorf("postgres: search: %w", err)
		}
		if v != nil { // nil: the subject's keys are gone
			sq.names, sq.vecs = append(sq.names, subject), append(sq.vecs, vectorText(v))
		}
	}
	return sq, nil, nil
}

// spacesQuery builds the exact query of a search that meets several
// spaces: each item is scored by its best vector against the query in its
// own space, and items with vectors in no space the search has a query for
// (a subject whose keys are gone) are left out. No ANN index serves it: the
// vector index orders by distance to one vector, and here each space has
// its own. The vectors under the prefix are read once (d: one hash join
// of each vector with its space's query; lost marks an item whose space
// has no query), then joined with the items, so that it costs one scan of
// the prefix's vectors, not a lookup per item.
func (s *Store) spacesQuery(prefix store.Namespace, sq *spaceQueries) func(a *args, where string) string {
	return func(a *args, where string) string {
		space := "''"
		if sq.dotted != "" {
			space = `CASE WHEN starts_with(sv.prefix, ` + a.add(sq.dotted) + `) THEN split_part(sv.prefix, '.', ` + strconv.Itoa(sq.part) + `) ELSE '' END`
		}
		return `WITH q AS MATERIALIZED (SELECT u.space, u.vec::` + s.index.vecType + ` AS vec FROM unnest(` + a.add(sq.names) + `::text[], ` + a.add(sq.vecs) + `::text[]) AS u(space, vec)),
d AS MATERIALIZED (
    SELECT sv.prefix, sv.key, min(sv.embedding ` + s.index.op + ` q.vec) AS dist,
        bool_or(q.vec IS NULL AND sv.embedding IS NOT NULL) AS lost
    FROM ` + s.t.vectors + ` sv LEFT JOIN q ON q.space = (` + space + `)
    WHERE ` + nsCond(a, "sv.prefix", prefix) + `
    GROUP BY sv.prefix, sv.key)
SELECT s.prefix, s.key, s.value, s.created_at, s.updated_at, s.expires_at, s.ttl_minutes, d.dist
FROM ` + s.t.store + ` s
LEFT JOIN d ON d.prefix = s.prefix AND d.key = s.key
WHERE ` + nsCond(a, "s.prefix", prefix) + ` AND ` + where + ` AND d.lost IS NOT TRUE
ORDER BY d.dist ASC NULLS LAST, s.updated_at DESC, s.prefix COLLATE "C", s.key COLLATE "C"`
	}
}
