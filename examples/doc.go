// Package examples holds small programs that show memvault at work, each a
// main package in its own directory with a comment saying what it shows and
// how to run it:
//
//   - quickstart: the embedded default (a SQLite file, offline
//     embeddings): checkpoints of a thread, the latest read back, a memory
//     found by meaning.
//   - postgres: memvault inside the application's own PostgreSQL
//     transactions: an app row, an encrypted checkpoint and a memory that
//     commit or roll back together (needs MEMVAULT_DSN).
//   - time-travel: a thread's history, and a fork from an earlier
//     checkpoint with changed state; both branches stay readable.
//   - key-rotation: values written under one key, re-encrypted under a new
//     one, after which the old key reads nothing and can be retired.
//   - shared-with-python: the LangGraph-compatible mode: rows in LangGraph's
//     "aes" format, what Python sees, and the Python that reads them.
//
// Run one from the repository root, for example:
//
//	go run ./examples/quickstart
//
// The tests in this directory build every example and run it, the
// PostgreSQL ones against a throwaway cluster (see memvaulttest/pgtest).
package examples
