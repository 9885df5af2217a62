package sqliteaudit_test

import (
	"path/filepath"
	"testing"

	"github.com/memvault/memvault/audit/audittest"
	"github.com/memvault/memvault/audit/sqliteaudit"
)

// TestMarksBetween: see audittest.RunMarksBetween.
func TestMarksBetween(t *testing.T) {
	audittest.RunMarksBetween(t, sqliteaudit.Meta(filepath.Join(t.TempDir(), "data.db")).(audittest.BetweenMarks))
}
