// Package mongotest runs a real MongoDB-protocol server for tests and
// examples: FerretDB v1.24.2 (a Go module, built by the go command on
// first use from ./ferretsrv) in a process of its own, listening on a
// loopback port, with its SQLite backend in a temporary directory. No
// mongod can be had on the machines memvault is built on, so every
// `go test` gets a real server with nothing to install. It is the MongoDB
// counterpart of memvaulttest/pgtest. The server runs apart from the
// tests so that `go test -race` does not instrument it (in-process, a
// conformance run took over forty minutes).
//
// FerretDB v1 lacks multi-document transactions, change streams, TTL
// indexes and $vectorSearch, and returns 0 for the second of two $sum
// accumulators in one $group: code tested here must not rely on them.
//
// Use Main from a package's TestMain and Database in each test; Start is
// for runnable examples and programs. Start needs the go command and this
// package's source (as `go test` has them).
package mongotest
