// Package adaptertest opens every memvault backend for the adapters'
// tests: the memory driver, a SQLite file and a throwaway PostgreSQL
// schema (memvaulttest/pgtest), the SQL ones encrypted unless asked otherwise.
// Each backend can be opened again on the same data, as a restarted
// process would. Test packages using it call pgtest.Main from TestMain:
//
//	func TestMain(m *testing.M) { pgtest.Main(m) }
//
//	func TestSomething(t *testing.T) {
//		for _, b := range adaptertest.Backends(t, adaptertest.Options{Indexed: true}) {
//			t.Run(b.Name, func(t *testing.T) {
//				st := b.Store(t) // b.Store(t) again is a restarted process on the same data
//				…
//			})
//		}
//	}
//
// Its Examples are compiled, not run: everything it does needs a
// *testing.T, and Backends needs the PostgreSQL cluster of pgtest.Main.
//
// It is one of memvault's test kits (see package memvaulttest): for
// tests only.
package adaptertest
