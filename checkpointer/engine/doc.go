// Package engine runs the checkpointer contract on a storage driver
// (checkpointer.Driver): it implements checkpointer.Saver and every
// optional capability (Pruner, Copier, RunDeleter, CheckpointDeleter,
// ThreadLister, ThreadImporter, Sweeper) once, so that each rule —
// validation and limits, serialization and sealing where a value lives,
// the parent rule of a put, which rows a delete, prune, sweep or run
// deletion removes, re-sealing on copy, atomic import — has one home.
//
// A backend package (checkpointer/memsaver, checkpointer/sqlitesaver, …) writes
// the driver and returns an engine Saver on it, adding what only it has
// (a transaction-bound twin, Close, DrainWrites).
//
// # Writing a driver
//
// Implement checkpointer.Driver (its doc comment lists what each method
// must and must not do), then run the conformance suite
// (checkpointertest.Run) on engine.New(yourDriver, …): the suite, not the
// driver, is the specification. A driver stores and fetches rows and runs
// the write fence inside each write; it never decodes a document, opens a
// value or chooses which rows go. checkpointer/memsaver is the smallest
// complete driver and the one to read first. The SQL drivers of this
// module share their row handling — thread pages, thread infos, heads, a
// thread's rows, a scan's key conditions — in
// checkpointer/internal/sqlrows, so that each keeps only its statements.
package engine
