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

func TestSplitRows(t *testing.T) {
	rows, ok := SplitRows([]string{"a", "b", "c", "d", "e", "f"}, 3)
	if !ok || len(rows) != 2 || rows[1][0] != "d" || len(rows[0]) != 3 || cap(rows[0]) != 3 {
		t.Errorf("SplitRows(6 by 3) = %v, %v", rows, ok)
	}
	for _, n := range []int{4, 0, -1} {
		if _, ok := SplitRows([]string{"a", "b", "c"}, n); ok {
			t.Errorf("SplitRows(3 by %d) took a partial row", n)
		}
	}
}
