// Package eino makes memvault the checkpoint store of CloudWeGo Eino
// (github.com/cloudwego/eino): CheckPointStore is a compose.CheckPointStore
// (and adk.CheckPointDeleter) on any memvault checkpointer — SQLite by
// default, PostgreSQL in production, encrypted when the saver's serializer
// is.
//
// Eino keeps one checkpoint per id and overwrites it. Here each Set is a new
// checkpoint of a memvault thread named by the checkpoint id, so the
// history of a run's interrupts is kept: History lists it, Restore makes an
// earlier one current again (time travel), and memvault's CLI and library
// see ordinary threads (list, export, fork). Get returns the latest; Delete
// deletes the thread. Options.KeepLast bounds the history (Eino's open
// request for checkpoint cleanup): after each Set only the newest KeepLast
// checkpoints stay. Options.IdleTTL with Sweep deletes runs left idle
// longer than the TTL, such as interrupts nobody resumed.
//
// The same store serves Eino's ADK runner (adk.RunnerConfig.CheckPointStore):
// an agent stopped by a tool's interrupt is resumed by a new process from
// the checkpoint here.
//
// Eino's checkpoint store and indexer have no user id, so nothing here
// maps one to a data subject. Under per-subject keys, a checkpoint id
// that starts with the user's subject and a separator ("carol:refund-1",
// MEMVAULT_SUBJECT_THREAD_SEPARATOR=":") makes a run's checkpoints hers,
// and a Knowledge namespace under her label (KnowledgeOptions.Namespace
// {"users", user, "docs"}, MEMVAULT_SUBJECT_NAMESPACE=users) her documents.
package eino
