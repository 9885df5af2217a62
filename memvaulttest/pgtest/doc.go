// Package pgtest gives tests a real PostgreSQL database, one schema per test.
//
// When the TEST_DATABASE_URL environment variable is set, pgtest uses that
// database. Otherwise it starts one throwaway cluster per test binary from the
// local PostgreSQL server binaries (initdb and pg_ctl, looked up in PATH,
// PGTEST_BINDIR and /usr/lib/postgresql/*/bin, preferring the newest version
// that has pgvector): a fresh data directory under the temporary directory, a
// free port on 127.0.0.1 only, durability switched off for speed. When the tests
// run as root, the cluster runs as the "postgres" system user, since PostgreSQL
// refuses to run as root.
//
// Every package that uses pgtest must call [Main] from its TestMain, which stops
// the cluster and removes its directory when the tests end:
//
//	func TestMain(m *testing.M) { pgtest.Main(m) }
//
// Tests then ask for an isolated schema:
//
//	func TestSomething(t *testing.T) {
//		pool := pgtest.Pool(t) // search_path: the test's own schema, then public
//		...
//	}
//
// [Schema], [Pool] and [SchemaDSN] each create a new schema named after the test
// and drop it, with everything in it, when the test ends. The pgvector extension
// is created once in the public schema, so its types and operators are visible
// from every test schema.
//
// [StartStandby] adds a hot standby of the throwaway cluster (pg_basebackup,
// then streaming replication) for tests of reads on a replica; its
// [Standby.CatchUp] waits until the standby has replayed the primary's writes,
// asynchronous commits included.
//
// [CitusSchema] and [CitusSchemaDSN] do the same on a throwaway Citus
// cluster (a coordinator and two workers on loopback, started once per test
// binary) for tests of the distributed case. Citus is not packaged by
// Debian: scripts/install-citus.sh builds it from a source tarball. Without
// it those tests skip, or fail when MEMVAULT_REQUIRE_CITUS=1 (as in CI).
//
// A cluster cannot outlive its test binary: a small watchdog process, started
// with the cluster, stops it and removes its directory as soon as the test
// binary exits, even when it is killed. Clusters left behind anyway (say, the
// watchdog was killed too) are removed by the next test binary that starts one.
//
// Without PostgreSQL server binaries (or without pgvector) the tests fail with a
// message saying to run scripts/install-deps.sh or to set TEST_DATABASE_URL;
// under go test -short they are skipped.
//
// It is one of memvault's test kits (see package memvaulttest): for
// tests only.
package pgtest
