package pgstore

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/memvault/memvault/embeddings"
	"github.com/memvault/memvault/memvaulttest/pgtest"
	"github.com/memvault/memvault/store"
)

// evilLabels are namespace labels full of SQL and escape-string
// metacharacters.
var evilLabels = []string{`a'b`, `x'); DROP TABLE store; --`, `\`, `\x41`, `$1`, `%_`, "ü 😀", "\uFFFD", `E'`, "/*"}

// TestEscapeLiteralInPostgres: PostgreSQL reads every escaped constant back
// as the string it was made from.
func TestEscapeLiteralInPostgres(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.Pool(t)
	for _, s := range append(evilLabels, "users", "a.b/c", strings.Repeat("é", 500)) {
		lit, ok := escapeLiteral(s)
		if !ok {
			t.Fatalf("%q not escaped", s)
		}
		var got string
		if err := pool.QueryRow(ctx, "SELECT "+lit).Scan(&got); err != nil {
			t.Fatalf("%q: %v", s, err)
		}
		if got != s {
			t.Fatalf("%q read back as %q", s, got)
		}
	}
	for _, s := range []string{"a\x00b", "\xff", "a\xc3"} {
		if lit, ok := escapeLiteral(s); ok {
			t.Errorf("%q escaped as %s", s, lit)
		}
	}
}

// TestPreparedPrefixSearch: a prefix searched again goes through a cached
// statement holding the prefix, and finds exactly what the first search
// (planned with parameters) found, under prefixes full of metacharacters,
// next to sibling namespaces the prefix conditions must keep out.
func TestPreparedPrefixSearch(t *testing.T) {
	ctx := context.Background()
	cfg := pgtest.Pool(t).Config()
	cfg.MaxConns = 1 // one session, so its prepared statements can be listed
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	s, err := New(pool, Options{Index: &store.IndexConfig{Embedder: embeddings.NewUnkeyedHashing(32), Fields: []string{"text"}}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Setup(ctx); err != nil {
		t.Fatal(err)
	}
	var ops []store.Op
	for _, l := range evilLabels {
		for _, ns := range []store.Namespace{{"t", l}, {"t", l, "deeper"}, {"t", l + "x"}, {"t", l + "-"}} {
			for i := range 6 {
				ops = append(ops, store.PutOp{Namespace: ns, Key: fmt.Sprint(i), Value: map[string]any{"text": fmt.Sprintf("note %d on %s", i, ns)}})
			}
		}
	}
	if _, err := s.Batch(ctx, ops); err != nil {
		t.Fatal(err)
	}
	for _, l := range evilLabels {
		prefix := store.Namespace{"t", l}
		var runs [3][]string
		for i := range runs {
			items, err := s.Search(ctx, prefix, store.SearchOptions{Query: "note 3", Limit: 20})
			if err != nil {
				t.Fatalf("%v, search %d: %v", prefix, i, err)
			}
			for _, it := range items {
				if !it.Namespace.HasPrefix(prefix) {
					t.Fatalf("%v, search %d: found %v", prefix, i, it.Namespace)
				}
				runs[i] = append(runs[i], fmt.Sprintf("%s/%s %.6f", it.Namespace, it.Key, *it.Score))
			}
		}
		if len(runs[0]) != 12 || !slices.Equal(runs[0], runs[1]) || !slices.Equal(runs[0], runs[2]) {
			t.Fatalf("%v: searches differ:\n%q\n%q\n%q", prefix, runs[0], runs[1], runs[2])
		}
		lit, _ := escapeLiteral(prefix.String())
		var n int
		if err := pool.QueryRow(ctx, `SELECT count(*) FROM pg_prepared_statements WHERE strpos(statement, $1) > 0`, "sv.prefix = "+lit).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != 1 {
			t.Fatalf("%v: %d cached statements hold the prefix, want 1", prefix, n)
		}
	}
}

// TestPreparedPrefixSQLASCII: on a SQL_ASCII database, which refuses the
// Unicode escapes of a non-ASCII prefix, such a prefix keeps its
// parameters when searched again; ASCII prefixes still get a cached
// statement.
func TestPreparedPrefixSQLASCII(t *testing.T) {
	ctx := context.Background()
	admin, err := pgx.Connect(ctx, pgtest.DSN(t))
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	db := fmt.Sprintf("mv_sqlascii_%d", time.Now().UnixNano())
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+db+" ENCODING 'SQL_ASCII' LC_COLLATE 'C' LC_CTYPE 'C' TEMPLATE template0"); err != nil {
		t.Fatal(err)
	}
	defer admin.Exec(context.Background(), "DROP DATABASE "+db+" WITH (FORCE)") //nolint:errcheck // best-effort cleanup
	cfg, err := pgxpool.ParseConfig(pgtest.DSN(t))
	if err != nil {
		t.Fatal(err)
	}
	cfg.ConnConfig.Database = db
	cfg.MaxConns = 1
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	if _, err := pool.Exec(ctx, "CREATE EXTENSION IF NOT EXISTS vector"); err != nil {
		t.Fatal(err)
	}
	s, err := New(pool, Options{Index: &store.IndexConfig{Embedder: embeddings.NewUnkeyedHashing(32), Fields: []string{"text"}}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Setup(ctx); err != nil {
		t.Fatal(err)
	}
	for _, l := range []string{"ascii", "ü 😀"} {
		prefix := store.Namespace{"t", l}
		for i := range 3 {
			if err := s.Put(ctx, prefix, fmt.Sprint(i), map[string]any{"text": fmt.Sprintf("note %d", i)}); err != nil {
				t.Fatal(err)
			}
		}
		for i := range 3 {
			items, err := s.Search(ctx, prefix, store.SearchOptions{Query: "note 1"})
			if err != nil || len(items) != 3 {
				t.Fatalf("%v, search %d: %d items, %v", prefix, i, len(items), err)
			}
		}
		var n int
		if err := pool.QueryRow(ctx, `SELECT count(*) FROM pg_prepared_statements WHERE strpos(statement, 'sv.prefix = E') > 0 AND strpos(statement, $1) > 0`, `\x`+fmt.Sprintf("%02x", l[0])).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if want := map[bool]int{true: 1, false: 0}[l == "ascii"]; n != want {
			t.Errorf("%v: %d cached statements hold the prefix, want %d", prefix, n, want)
		}
	}
}
