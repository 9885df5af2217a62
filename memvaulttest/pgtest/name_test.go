package pgtest

import (
	"regexp"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
)

var validSchema = regexp.MustCompile(`^t_([a-z0-9]+(_[a-z0-9]+)*_)?[0-9a-f]{8}$`)

func TestSchemaName(t *testing.T) {
	tests := []struct{ test, want string }{
		{"TestFoo", "t_testfoo_0123abcd"},
		{"TestFoo/sub_case#01", "t_testfoo_sub_case_01_0123abcd"},
		{"Test Ünïcode--x", "t_test_n_code_x_0123abcd"},
		{"///", "t_0123abcd"},
		{"", "t_0123abcd"},
		{strings.Repeat("a", 100), "t_" + strings.Repeat("a", 52) + "_0123abcd"},
		{strings.Repeat("a", 51) + "/b", "t_" + strings.Repeat("a", 51) + "_0123abcd"},
	}
	for _, tt := range tests {
		got := schemaName(tt.test, "0123abcd")
		if got != tt.want {
			t.Errorf("schemaName(%q) = %q, want %q", tt.test, got, tt.want)
		}
		if len(got) > maxIdentLen {
			t.Errorf("schemaName(%q) is %d bytes long", tt.test, len(got))
		}
	}
}

func FuzzSchemaName(f *testing.F) {
	for _, s := range []string{"TestFoo", "TestFoo/sub#01", "", "/", "ÄÖÜ", strings.Repeat("ab/", 40)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, test string) {
		got := schemaName(test, randomSuffix())
		if len(got) > maxIdentLen || !validSchema.MatchString(got) || !plainIdent(got) {
			t.Fatalf("schemaName(%q) = %q: not a plain identifier of at most %d bytes", test, got, maxIdentLen)
		}
	})
}

func TestPlainIdent(t *testing.T) {
	for s, want := range map[string]bool{
		"public": true, "t_x_1": true, "_a$": true, "a$1": true,
		"": false, "1a": false, "$a": false, "A": false, "a b": false, "a-b": false,
		strings.Repeat("a", 64): false,
	} {
		if got := plainIdent(s); got != want {
			t.Errorf("plainIdent(%q) = %v, want %v", s, got, want)
		}
	}
}

// FuzzWithSearchPath checks that any schema name yields a connection string
// pgx parses, carrying the search_path option.
func FuzzWithSearchPath(f *testing.F) {
	for _, s := range []string{"public", "My Schema", `it's`, `a\b`, `"q"`, "tab\there", "π"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, schema string) {
		for _, base := range []string{"postgres://u@localhost:5432/db?sslmode=disable", "host=localhost dbname=db sslmode=disable"} {
			dsn, err := WithSearchPath(base, schema, "public")
			if schema == "" || strings.ContainsRune(schema, 0) {
				if err == nil {
					t.Fatalf("WithSearchPath(%q) accepted an invalid name", schema)
				}
				return
			}
			if err != nil {
				t.Fatalf("WithSearchPath(%q): %v", schema, err)
			}
			cfg, err := pgconn.ParseConfig(dsn)
			if err != nil {
				t.Fatalf("pgconn cannot parse %q: %v", dsn, err)
			}
			if opt := cfg.RuntimeParams["options"]; !strings.HasPrefix(opt, "-csearch_path=") {
				t.Fatalf("%q: options = %q", dsn, opt)
			}
		}
	})
}
