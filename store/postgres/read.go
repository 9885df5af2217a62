package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/memvault/memvault/store/internal/items"

	"github.com/jackc/pgx/v5"

	"github.com/memvault/memvault/store"
)

// Get returns an item, or (nil, nil) when absent. When refresh on read is
// on (TTLConfig, or WithRefreshTTL(true)), the item's TTL restarts in the
// same statement.
func (s *Store) Get(ctx context.Context, ns store.Namespace, key string, opts ...store.GetOption) (*store.Item, error) {
	if err := s.b.Check(ctx); err != nil {
		return nil, err
	}
	return s.get(ctx, ns, key, items.ResolveGet(opts).RefreshTTL)
}

func (s *Store) get(ctx context.Context, ns store.Namespace, key string, refreshOverride *bool) (*store.Item, error) {
	if err := ns.Validate(); err != nil {
		return nil, err
	}
	if err := store.ValidateKey(key); err != nil {
		return nil, err
	}
	prefix := ns.String()
	now := s.nowUTC()
	live := "(expires_at IS NULL OR expires_at > $3)"
	refresh := s.b.Refresh(refreshOverride)
	sel := `SELECT value, created_at, updated_at, expires_at, ttl_minutes FROM ` + s.t.store + ` WHERE prefix = $1 AND key = $2 AND ` + live
	a := []any{prefix, key, now}
	if refresh {
		// One statement: the SELECT sees the row as before the UPDATE, and
		// the refreshed expiry is computed here the same way.
		sel = `WITH refreshed AS (
    UPDATE ` + s.t.store + ` SET expires_at = $3::timestamptz + ttl_minutes * interval '1 minute'
    WHERE prefix = $1 AND key = $2 AND ttl_minutes IS NOT NULL AND ` + live + `
    RETURNING 1)
` + sel
	}
	var (
		raw              []byte
		created, updated time.Time
		expires          *time.Time
		ttlMinutes       *int32
	)
	err := s.db.QueryRow(ctx, sel, a...).Scan(&raw, &created, &updated, &expires, &ttlMinutes)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("postgres: get: %w", err)
	}
	v, err := s.decodeValue(ctx, prefix, key, raw)
	if err != nil {
		return nil, err
	}
	it := &store.Item{Namespace: ns.Clone(), Key: key, Value: v, CreatedAt: created.UTC(), UpdatedAt: updated.UTC()}
	if expires != nil {
		it.ExpiresAt = expires.UTC()
	}
	if refresh && ttlMinutes != nil {
		it.ExpiresAt = now.Add(items.RefreshTTL(int(*ttlMinutes)))
	}
	return it, nil
}

// refreshItems restarts the TTL of items a search returned.
func (s *Store) refreshItems(ctx context.Context, items []store.SearchItem, now time.Time) error {
	if len(items) == 0 {
		return nil
	}
	prefixes, keys := make([]string, len(items)), make([]string, len(items))
	for i, it := range items {
		prefixes[i], keys[i] = it.Namespace.String(), it.Key
	}
	_, err := s.db.Exec(ctx, `UPDATE `+s.t.store+` s SET expires_at = $3::timestamptz + s.ttl_minutes * interval '1 minute'
FROM unnest($1::text[], $2::text[]) AS r(prefix, key)
WHERE s.prefix = r.prefix AND s.key = r.key AND s.ttl_minutes IS NOT NULL`, prefixes, keys, now)
	if err != nil {
		return fmt.Errorf("postgres: refresh ttl: %w", err)
	}
	return nil
}

// ListNamespaces lists the namespaces holding items (see store.Store):
// prefix and suffix conditions as regular expressions over the stored
// prefix (labels escaped, passed as parameters), truncation to MaxDepth,
// byte-wise order of the dotted form, offset and limit, all in SQL.
func (s *Store) ListNamespaces(ctx context.Context, opt store.ListNamespacesOptions) ([]store.Namespace, error) {
	if err := s.b.Check(ctx); err != nil {
		return nil, err
	}
	if err := opt.Validate(); err != nil {
		return nil, err
	}
	var a args
	ns := "prefix"
	if opt.MaxDepth > 0 {
		ns = fmt.Sprintf("array_to_string((string_to_array(prefix, '.'))[1:%s::int], '.')", a.add(opt.MaxDepth))
	}
	where := "TRUE"
	if len(opt.Prefix) > 0 {
		where += " AND prefix ~ " + a.add(prefixRegex(opt.Prefix))
	}
	if len(opt.Suffix) > 0 {
		where += " AND prefix ~ " + a.add(suffixRegex(opt.Suffix))
	}
	where += " AND (expires_at IS NULL OR expires_at > " + a.add(s.nowUTC()) + ")"
	sql := `SELECT DISTINCT ns FROM (SELECT (` + ns + `) COLLATE "C" AS ns FROM ` + s.t.store + ` WHERE ` + where + `) t
ORDER BY ns LIMIT ` + a.add(opt.EffectiveLimit()) + ` OFFSET ` + a.add(opt.Offset)
	rows, err := s.db.Query(ctx, sql, a...)
	if err != nil {
		return nil, fmt.Errorf("postgres: list namespaces: %w", err)
	}
	out := []store.Namespace{}
	for rows.Next() {
		var p string
		if err := rows.Scan(&p); err != nil {
			rows.Close()
			return nil, fmt.Errorf("postgres: list namespaces: %w", err)
		}
		out = append(out, store.ParseNamespace(p))
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("postgres: list namespaces: %w", err)
	}
	return out, nil
}

// prefixRegex matches a stored prefix starting with labels ("*" = any one
// label): ^a\.[^.]+\.c(\.|\Z).
func prefixRegex(labels store.Namespace) string {
	return "^" + labelsRegex(labels) + `(\.|\Z)`
}

// suffixRegex matches a stored prefix ending with labels: (^|\.)c\Z.
func suffixRegex(labels store.Namespace) string {
	return `(^|\.)` + labelsRegex(labels) + `\Z`
}

func labelsRegex(labels store.Namespace) string {
	var b []byte
	for i, l := range labels {
		if i > 0 {
			b = append(b, `\.`...)
		}
		if l == "*" {
			b = append(b, `[^.]+`...)
			continue
		}
		b = appendRegexQuote(b, l)
	}
	return string(b)
}

// appendRegexQuote escapes every printable ASCII character that is not a
// letter or a digit (in PostgreSQL's regular expressions a backslash before
// any of them means the character itself); space, control and non-ASCII
// characters are literal as they are.
func appendRegexQuote(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 0x20 < c && c < 0x7f && !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9') {
			b = append(b, '\\')
		}
		b = append(b, c)
	}
	return b
}
