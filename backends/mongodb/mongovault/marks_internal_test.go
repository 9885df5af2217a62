package mongovault

import (
	"testing"

	"github.com/memvault/memvault/audit/audittest"
	"github.com/memvault/memvault/backends/mongodb/mongotest"
)

// TestMarksBetween: see audittest.RunMarksBetween.
func TestMarksBetween(t *testing.T) {
	audittest.RunMarksBetween(t, auditMeta{mongotest.Database(t).Collection(metaCol)})
}
