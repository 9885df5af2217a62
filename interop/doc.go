// Package interop is test-only: it has no API. Its tests prove that memvault's PostgreSQL checkpointer
// (checkpointer/pgsaver) shares its tables with the real JS LangGraph
// checkpointer, @langchain/langgraph-checkpoint-postgres 1.0.5 (with
// @langchain/langgraph-checkpoint 1.2.2, @langchain/langgraph 1.7.3 and
// @langchain/core 1.4.0, pinned in js/package.json), in both directions.
//
// The tests run the JS package itself, with node, against the test
// PostgreSQL of memvaulttest/pgtest:
//
//   - TestJSWritesMemvaultReads: JS's setup() creates the tables (its
//     migrations 0..4) and js/write.mjs writes two threads as a JS graph
//     does; memvault's Setup upgrades the tables to LangGraph's 0..9 and
//     memvault reads every checkpoint (List in all namespaces, GetTuple by
//     id, latest, filters, before, limit) exactly as JS reads it: the same
//     channels, values, integer versions (as "1", "2", ...), metadata and
//     pending writes in order, and the pending sends of v1 checkpoints.
//     Afterwards JS's setup() has nothing left to do and JS still reads its
//     threads.
//   - TestMemvaultWritesJSReads: memvault (VersionInt, plain JSONPlus) sets
//     up the tables and writes a thread; js/read.mjs runs JS's setup() (a
//     no-op), lists the thread, sees the same values revived as the same JS
//     classes (LangChain messages, Set, Uint8Array), then continues it (a
//     checkpoint whose integer versions JS increments, and pending writes);
//     memvault reads the continuation and continues again, and JS reads that.
//   - TestExportImportJSThread: a JS-written thread is copied through
//     memvault into another schema with checkpointer/threadfile (Export from
//     the source saver, Import into a VersionInt target, as `memvault
//     threads export | import` does); JS reads the copy exactly as it reads
//     the original and continues it, and memvault reads the continuation.
//   - TestJSGraphResumesAfterImport: a real JS StateGraph (js/graph.mjs:
//     agent, a subgraph with its own namespace, a node that calls
//     interrupt()) runs on PostgresSaver until it waits for approval;
//     memvault reads every checkpoint it wrote as JS reads it, copies the
//     thread into another schema, and the JS graph resumes there with
//     Command({resume}) and finishes exactly as it does on its own rows.
//   - TestMemvaultManagesJSThreads: memvault's CopyThread and Prune (which
//     JS lacks) on JS-written threads leave rows JS reads as before, and JS
//     continues the pruned thread. TestPruneKeepsLegacyPendingSends (on the
//     fixture, no node) checks that Prune keeps the pending sends of a v<4
//     checkpoint, which live in its parent's __pregel_tasks writes.
//   - TestMemvaultNullJSReadable: a nil channel value or pending write that
//     memvault writes must be readable by JS, whose serializer reads only
//     the "json" and "bytes" types (JS graphs write null values all the
//     time: the branch:to:<node> channels).
//   - TestStringVersionsJSReads: with Python's string versions (memvault's
//     default) JS reads the thread but cannot continue it (its
//     getNextVersion refuses strings), hence VersionInt next to JS.
//   - TestJSRowsFixture: loads memvaulttest/jsrows/testdata/js_rows.sql (the
//     rows JS wrote, memvaulttest/jsrows.JSRowsSQL) into a fresh schema and checks memvault's reading of it
//     against testdata/js_rows.json (JS's own reading of the same rows),
//     without node, so it runs wherever PostgreSQL does.
//
// Values are compared through their wire form: memvault's JSONPlus must
// write a value it read as the same (type, data) pair JS writes for it, up
// to key order and number spelling; the Go types memvault decodes into and
// the JS classes JS revives are checked besides.
//
// # Running
//
// scripts/install-deps.sh installs the npm packages (npm ci --prefix
// interop/js). Then
//
//	go test ./interop/
//
// Without node or interop/js/node_modules the tests that need them fail with
// a message saying so; under go test -short they are skipped. To regenerate
// the fixture from a live run of the JS package:
//
//	go test ./interop/ -run TestUpdateFixtures -update-fixtures
//
// The JS scripts take the schema (and thread) as arguments and the
// connection from PGHOST, PGPORT, PGUSER, PGPASSWORD and PGDATABASE, so they
// can be run by hand: node interop/js/write.mjs myschema.
//
// # Fixture
//
// memvaulttest/jsrows/testdata/js_rows.sql holds threads jsrows.JSGraphThread
// ("js-graph"), jsrows.JSSendsThread ("js-sends") and
// jsrows.JSRealGraphThread ("js-real-graph");
// the ids of their checkpoints are under "threads" in testdata/js_rows.json:
// for js-graph "input" (step -1), "step0", "step1" (the latest of the root
// namespace), "child" in namespace "child_ns"; for js-sends "parent" and
// "child" (v1, with pending sends); for js-real-graph "latest" (the root
// checkpoint waiting at the interrupt). Under "tuples" is every checkpoint
// of each thread as JS's PostgresSaver.list returns it, newest first.
package interop
