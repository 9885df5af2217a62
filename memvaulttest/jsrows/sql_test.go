package jsrows_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/memvault/memvault/memvaulttest/jsrows"
)

func TestStatements(t *testing.T) {
	for _, c := range []struct {
		script string
		want   []string
	}{
		{"", nil},
		{"-- only a comment\n\n", nil},
		{"SELECT 1;", []string{"SELECT 1"}},
		{"SELECT 1;\r\nSELECT 2;\r\n", []string{"SELECT 1", "SELECT 2"}},
		{"SELECT\n  1\n;\n-- c\nSELECT 'a;b';\n", []string{"SELECT\n  1", "SELECT 'a;b'"}},
		{"SELECT 1;\nSELECT 2", []string{"SELECT 1", "SELECT 2"}},
		{";\n  ;\nSELECT 1 ;;\n", []string{"SELECT 1 ;"}},
		{"SELECT '-- not a comment';\n", []string{"SELECT '-- not a comment'"}},
	} {
		if got := jsrows.Statements(c.script); !slices.Equal(got, c.want) {
			t.Errorf("Statements(%q) = %q, want %q", c.script, got, c.want)
		}
	}
	// The embedded fixture: JS's four tables and their rows.
	var creates, inserts int
	for _, s := range jsrows.Statements(jsrows.JSRowsSQL) {
		switch {
		case strings.HasPrefix(s, "CREATE TABLE "):
			creates++
		case strings.HasPrefix(s, "INSERT INTO "):
			inserts++
		default:
			t.Errorf("unexpected statement in JSRowsSQL: %.80q", s)
		}
	}
	if creates != 4 || inserts < 20 {
		t.Errorf("JSRowsSQL has %d CREATE TABLE and %d INSERT statements", creates, inserts)
	}
}

// FuzzStatements: any script splits without panicking into non-empty,
// trimmed statements, and statements joined back with
// ";\n" split into themselves.
func FuzzStatements(f *testing.F) {
	for _, s := range []string{"", "SELECT 1;", "-- c\nA;\nB", "x;\r\n;\n", ";;;\n", jsrows.JSRowsSQL[:min(len(jsrows.JSRowsSQL), 2000)]} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, script string) {
		stmts := jsrows.Statements(script)
		for _, s := range stmts {
			if s == "" || s != strings.TrimSpace(s) {
				t.Fatalf("statement %q is empty or not trimmed", s)
			}
		}
		again := jsrows.Statements(strings.Join(stmts, ";\n") + ";\n")
		if len(stmts) > 0 && !slices.Equal(again, stmts) {
			// A statement may itself hold lines ending in ";" only when the
			// input did; re-splitting such a statement is allowed to differ.
			for _, s := range stmts {
				for line := range strings.Lines(s) {
					if strings.HasSuffix(strings.TrimSpace(line), ";") {
						return
					}
				}
			}
			t.Fatalf("re-split %q = %q", stmts, again)
		}
	})
}
