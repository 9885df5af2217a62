// Package bench is the engine of `memvault bench`: it measures memvault's
// checkpointer and store, plaintext and encrypted, next to a baseline that
// sends equivalent SQL directly (raw pgx on PostgreSQL, database/sql on
// SQLite) and, optionally, next to JS LangGraph's PostgresSaver or
// PostgresStore run by node.
//
// [RunCheckpointer] and [RunStore] each run one bench and write its report
// to an io.Writer as the rows come: a table for people (then the ratios to
// the baseline, to JS LangGraph and of encrypted to plaintext), or with
// Options.JSON one JSON object per [Row] (after, on PostgreSQL, one
// {"cluster":{...}} object holding the durability settings the figures
// depend on). Every operation runs one at a time and Options.Concurrency
// in flight, in slices of about a second that alternate between the modes
// (A B C, C B A, ...), so that drift and a busy machine weigh on every mode
// alike.
//
// A bench creates what it measures in a schema of its own (or in temporary
// SQLite files) and removes it afterwards. The zero value of every option
// stands for the CLI's default; options a bench cannot run are refused
// with an error wrapping [ErrOptions] before anything runs, its message
// naming the memvault bench flag that sets the option.
//
// On MongoDB (and Redis) the baseline is the Go driver (go-redis) without
// memvault, and the MongoDB rows also count the commands each operation
// sends (CmdsPerOp: the Go driver's command monitor, and node's for the JS
// column).
//
// The command in package main only parses flags into these options (see
// cmd/memvault/bench.go); scripts/bench-pg.sh and scripts/bench-mongo.sh
// run it for the README's tables.
package bench
