package pgaudit_test

import (
	"testing"

	"github.com/memvault/memvault/audit/audittest"
	"github.com/memvault/memvault/audit/pgaudit"
	"github.com/memvault/memvault/memvaulttest/pgtest"
)

// TestMarksBetween: see audittest.RunMarksBetween.
func TestMarksBetween(t *testing.T) {
	pool, schema := pgtest.Schema(t)
	audittest.RunMarksBetween(t, pgaudit.Meta(pool, schema).(audittest.BetweenMarks))
}
