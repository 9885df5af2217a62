package pgstore

import (
	"context"
	"errors"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/memvault/memvault/jsonvalue"
	"github.com/memvault/memvault/serde"
	"github.com/memvault/memvault/store"
)

// FuzzDecodeValue: any stored value decodes to an object or fails with a
// clear error, never a panic.
func FuzzDecodeValue(f *testing.F) {
	for _, seed := range []string{
		`{"a": 1}`, `{}`, `[]`, `null`, `1`, `"x"`, `{"a": {"b": [1, 2.5, null, true]}}`,
		`{"__memvault_enc__": 1, "t": "json", "d": "eyJhIjogMX0="}`,
		`{"__memvault_enc__": 1, "t": "json+envelope", "d": "AAAA"}`,
		`{"__memvault_enc__": 2, "t": "json", "d": ""}`,
		`{"__memvault_enc__": 1, "t": "json", "d": "!!"}`,
		`{"__memvault_enc__": 1, "t": "", "d": ""}`,
		`{"x": "__memvault_enc__"}`, `{"__memvault_enc__": 1}`, `{"n": 1e400}`, `{"n": 123456789012345678901234567890}`,
	} {
		f.Add([]byte(seed))
	}
	s, err := New((*pgxpool.Pool)(nil), Options{})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		v, err := s.decodeValue(context.Background(), "ns", "k", raw)
		if err == nil && v == nil {
			t.Fatal("nil value without error")
		}
		if err != nil && !errors.Is(err, ErrEnvelope) && !errors.Is(err, serde.ErrMalformed) {
			t.Fatalf("unexpected error kind: %v", err)
		}
	})
}

// FuzzEncodeDecode: what the store writes it reads back.
func FuzzEncodeDecode(f *testing.F) {
	for _, seed := range []string{"", "a", "\x00", `\u0000`, `\\u0000`, "ü😀", `"`, "\xff"} {
		f.Add(seed, seed)
	}
	s, err := New((*pgxpool.Pool)(nil), Options{})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, k, v string) {
		in := map[string]any{k: v, "n": []any{v}}
		raw, err := s.encodeValue(context.Background(), "ns", "k", in)
		if !utf8.ValidString(k) || !utf8.ValidString(v) {
			// Refused, never silently turned into U+FFFD.
			if !errors.Is(err, store.ErrInvalidArgument) {
				t.Fatalf("invalid UTF-8: error %v, want store.ErrInvalidArgument", err)
			}
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		out, err := s.decodeValue(context.Background(), "ns", "k", []byte(raw))
		if err != nil {
			t.Fatal(err)
		}
		if d := jsonvalue.Diff(in, out); d != "" {
			t.Fatalf("round trip of %q: %s", in, d)
		}
	})
}

// FuzzFilterSQL: filter keys and operands never change the SQL text, only
// the parameters.
func FuzzFilterSQL(f *testing.F) {
	f.Add("k", "v", 1.5)
	f.Add(`a'); DROP TABLE store; --`, `'`, -3.0)
	f.Add(`$1`, `\`, 0.0)
	f.Add("a\x00b", "\xff", 2.0)
	f.Add("k", "v\x00", 2.0)
	norm := regexp.MustCompile(`\$[0-9]+`)
	shape := func(t *testing.T, k, sv string, n float64) []string {
		var out []string
		for _, cond := range []any{
			sv, n, map[string]any{"$eq": sv}, map[string]any{"$ne": n},
			map[string]any{"$gt": n}, map[string]any{"$lte": sv},
		} {
			var a args
			sql, err := filterSQL(&a, "s.value", map[string]any{k: cond})
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, norm.ReplaceAllString(sql, "$"))
		}
		return out
	}
	f.Fuzz(func(t *testing.T, k, sv string, n float64) {
		if n != n || n > 1e308 || n < -1e308 {
			return // NaN and infinities are rejected earlier, by ValidateFilter
		}
		// The SQL's shape depends only on whether PostgreSQL text can
		// hold a key or string (textHolds): data it cannot hold is not
		// sent as is, and its rows are left to the engine's filter.
		like := func(s, ok string) string {
			if textHolds(s) {
				return ok
			}
			return "\x00"
		}
		got, ref := shape(t, k, sv, n), shape(t, like(k, "k"), like(sv, "v"), 1)
		for i := range got {
			if got[i] != ref[i] {
				t.Fatalf("SQL depends on the filter's data:\n%s\n%s", got[i], ref[i])
			}
		}
	})
}

// FuzzEscapeLiteral: an escaped constant is made of escapes only, and
// reads back as the string it was made from.
func FuzzEscapeLiteral(f *testing.F) {
	for _, seed := range []string{"users", `a'b`, `x'); DROP TABLE store; --`, `\`, `\x41`, "ü 😀", "\uFFFD", "\xff", "a\x00b", "$1"} {
		f.Add(seed)
	}
	shape := regexp.MustCompile(`\AE'(\\x[0-9a-f]{2}|\\U[0-9a-f]{8})*'\z`)
	f.Fuzz(func(t *testing.T, s string) {
		lit, ok := escapeLiteral(s)
		if want := utf8.ValidString(s) && !strings.ContainsRune(s, 0); ok != want {
			t.Fatalf("%q: ok %v, want %v", s, ok, want)
		}
		if !ok {
			return
		}
		if !shape.MatchString(lit) {
			t.Fatalf("%q: constant %s holds more than escapes", s, lit)
		}
		// Read it back as PostgreSQL does.
		var b strings.Builder
		for rest := lit[2 : len(lit)-1]; rest != ""; {
			if rest[1] == 'x' {
				n, _ := strconv.ParseUint(rest[2:4], 16, 8)
				b.WriteByte(byte(n))
				rest = rest[4:]
				continue
			}
			n, _ := strconv.ParseUint(rest[2:10], 16, 32)
			b.WriteRune(rune(n))
			rest = rest[10:]
		}
		if b.String() != s {
			t.Fatalf("%q reads back as %q", s, b.String())
		}
	})
}
