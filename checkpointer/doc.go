// Package checkpointer defines memvault's checkpoint model and the Saver
// contract: per-thread, per-step snapshots of graph state with history,
// pending writes, namespaces (subgraphs) and time travel, with the semantics
// of LangGraph's BaseCheckpointSaver.
//
// A checkpoint is addressed by a Config (thread id, namespace, checkpoint
// id). Put stores a snapshot and returns the config that names it; GetTuple
// loads one (the latest when no id is given); List streams a thread's
// history newest first; PutWrites records the writes of tasks that ran
// against a checkpoint but whose step has not completed, so a crashed run
// resumes without redoing them.
//
// Checkpoint ids are UUIDv6 strings (NewID) that sort by creation time as
// text. Channel versions are strings that compare by their integer part
// (Saver.NextVersion, VersionStyle). Metadata is stored as plain JSON and
// filtered with JSONB containment semantics (ListOptions.Filter).
//
// This package is the contract. What every backend does the same way —
// argument checks, the checkpoint document and metadata encodings, the
// binding of each sealed value to where it lives, write indexes and the
// upsert rule, pending-sends migration, versions — lives once in
// checkpointer/internal, and backends store and fetch its rows.
//
// Retention (RetentionPolicy, Sweeper), which LangGraph keeps for its
// hosted server, is part of every backend: delete threads idle longer than
// a TTL and/or keep only the newest N checkpoints of each namespace, with
// the pending writes and values those still need. Ages come from the
// UUIDv6 ids, so nothing is decrypted and LangGraph's tables gain no
// column; threads with other ids are never found idle. A sweep works a
// batch of threads per transaction, with statements whose number does not
// grow with the data, so writers wait at most one batch; savers run it in
// the background when their Options set a policy, until Close.
//
// Backends live in sub-packages: memory (tests and ephemeral use), sqlite
// (the embedded default) and postgres (production; the same tables as
// Python and JS LangGraph). checkpointertest is the conformance suite they
// all pass.
//
// # Writing a driver
//
// A backend is storage only: it implements Driver (driver.go) — read a
// checkpoint with its value and write rows, scan checkpoints newest first,
// store a put's or a task's rows atomically, and in a transaction read the
// heads a removal is decided on, lock, remove, delete threads, read and
// overwrite a thread's rows — and declares what its storage does itself
// (DriverCapabilities). checkpointer/engine runs the Saver contract and
// every capability on it, once: which rows a delete, prune, run deletion
// or sweep removes, re-sealing on copy, atomic import, re-encryption
// after a key rotation (a thread at a time, compare and swap; a driver
// whose threads may hold rows without a checkpoint also implements
// engine.RowThreads), validation and limits. A new driver returns
// engine.New(itsDriver, …) from its constructor and runs
// checkpointertest.Run and checkpointertest.RunReencrypt on it; memsaver
// is the smallest complete driver, pgsaver the one for storage where
// several processes write at once (Serialized false). The interface is unstable: do not
// implement it outside memvault yet.
package checkpointer
