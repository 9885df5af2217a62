// Command memvault is the command-line face of the memvault library: it
// plays the demo, inspects and moves threads, reads and writes memories,
// manages keys, runs migrations and benchmarks.
//
// Every command takes --dsn (PostgreSQL) or --db (SQLite file), --schema and
// --json, on top of the environment that config.FromEnv reads. Exit codes:
// 0 success, 1 runtime error, 2 usage error. Errors are printed on stderr in
// one line.
//
//	memvault demo                       the guided session on the embedded default
//	memvault threads history THREAD     a thread's checkpoints, newest first
//	memvault store search users --query "how to reach her"
//	memvault keys reencrypt             rewrite values under the primary key
//	memvault bench checkpointer --dsn postgres://...
package main
