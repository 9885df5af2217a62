package audit_test

import (
	"testing"

	"github.com/memvault/memvault/audit"
	"github.com/memvault/memvault/audit/audittest"
)

// TestMemoryTableConformance runs the audit table suite on MemoryTable,
// tampering through the test-only Tamper (export_test.go).
func TestMemoryTableConformance(t *testing.T) {
	audittest.RunTable(t, func(t *testing.T) audittest.Backend {
		m := audit.NewMemoryTable()
		return audittest.Backend{Table: m, Put: func(_ *testing.T, rs []audit.Record) {
			m.Tamper(func([]audit.Record) []audit.Record { return append([]audit.Record(nil), rs...) })
		}}
	})
}
