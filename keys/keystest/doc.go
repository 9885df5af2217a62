// Package keystest is the conformance suite of keys.Table: every key
// table (memory, SQLite, PostgreSQL, or one of yours) must pass Run.
//
//	func TestConformance(t *testing.T) {
//		keystest.Run(t, func(t *testing.T) keys.Table { return newEmptyTable(t) })
//	}
//
// It has no runnable Example: it needs a *testing.T.
package keystest
