// Package keystest is the conformance suite of keys.Table: every key
// table (memory, SQLite, PostgreSQL, or one of yours) must pass Run.
//
//	func TestConformance(t *testing.T) {
//		keystest.Run(t, func(t *testing.T) keys.Table { return newEmptyTable(t) })
//	}
//
// NewHierarchy gives the suites of erasure (checkpointertest.RunErasure,
// storetest.RunErasure) hierarchies over one table, standing for processes
// that share it. Run's Example is compiled, not run: it needs a
// *testing.T. It is for tests only: its master key is public.
package keystest
