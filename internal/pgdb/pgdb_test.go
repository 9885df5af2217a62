package pgdb

import "testing"

func TestRebind(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`SELECT 1`, `SELECT 1`},
		{`SELECT a FROM t WHERE (a, b) > (?, ?) LIMIT ?`, `SELECT a FROM t WHERE (a, b) > ($1, $2) LIMIT $3`},
		{`SELECT '?' FROM "we?rd" WHERE x = ?`, `SELECT '?' FROM "we?rd" WHERE x = $1`},
		{`SELECT 'it''s' WHERE y = ?`, `SELECT 'it''s' WHERE y = $1`},
	} {
		if got := Rebind(c.in); got != c.want {
			t.Errorf("Rebind(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
