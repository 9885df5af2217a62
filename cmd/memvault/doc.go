// Command memvault is the command-line face of the memvault library: it
// plays the demo, inspects and moves threads, reads and writes memories,
// manages keys, runs migrations and benchmarks.
//
// Every command takes --dsn (PostgreSQL) or --db (SQLite file), --schema,
// --json and --quiet, on top of the environment that config.FromEnv reads.
// Exit codes: 0 success, 1 runtime error (a thread, checkpoint or item not
// found included), 2 usage error (a bad flag or argument, an empty thread
// id, key or namespace label), 3 work recorded but not finished (forget).
// Errors are printed on stderr in one line.
//
// # Output for scripts
//
// With --json, standard output holds JSON only, in one of two shapes:
//
//   - JSON lines (one compact JSON object per line, nothing else) for the
//     commands that stream a list: threads list, threads history, threads
//     export (always), store search, store list, store namespaces, audit
//     show, keys census and bench. An empty list prints nothing.
//   - exactly one JSON value, an object, for every other command: a single
//     result (threads show, store get, threads fork), an action's summary
//     (threads delete, threads import, threads sweep, store put, keys
//     reencrypt, forget, migrate, ...) or a report (audit verify, keys
//     check). A command that fails after starting may still print its
//     object (audit verify, threads delete with a thread not found) and
//     exits non-zero.
//
// demo prints a transcript for people and refuses --json. Namespaces print
// as their labels joined with '/' (the form --prefix takes) in human output
// and as arrays of labels in JSON.
//
// Progress goes to standard error, never standard output: long commands
// (keys reencrypt, store reembed, threads sweep, threads import, threads
// export) draw a bar on a terminal and otherwise print plain lines, one
// when a step starts, one every few seconds while it runs and one when it
// ends ("memvault: re-encrypting memories: done, 1200 rows in 1.3s").
// --quiet turns them off.
//
//	memvault demo                       the guided session on the embedded default
//	memvault threads history THREAD     a thread's checkpoints, newest first
//	memvault store search users --query "how to reach her"
//	memvault keys reencrypt             rewrite values under the primary key
//	memvault bench checkpointer --dsn postgres://...
package main
