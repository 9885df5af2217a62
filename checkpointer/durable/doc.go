// Package durable offers LangGraph's durability modes to Go runtimes: a
// decorator over any checkpointer.Saver that decides when a Put or
// PutWrites reaches the inner saver.
//
//   - Sync (the zero value) is the inner saver unchanged: a put returns once
//     it is committed.
//   - Async returns from Put and PutWrites once the write is queued for its
//     thread. A background writer per thread writes the queue in order;
//     threads are written concurrently; consecutive queued writes of one
//     thread share one transaction when the inner saver imports threads
//     atomically (checkpointer.ThreadImporter).
//   - Exit keeps a thread's writes queued until something needs them: the
//     next read or management call on the thread, Flush, Close, or a full
//     queue. A run that ends with Flush stores its steps in as few
//     transactions as the batch size allows (LangGraph's durability="exit").
//
// # What waits, and where errors go
//
// Every call naming a thread (GetTuple, List of a thread, PutWrites,
// DeleteThread, Prune, CopyThread, DeleteCheckpoint) first waits until the
// thread's queue is written, so reads see every write queued before them
// and the Saver contract holds. Calls over every thread (a List without a
// thread id, ListThreads, DeleteForRuns, Sweep, Reencrypt) wait for every
// queue.
//
// A queued write that fails is never dropped silently. The thread's writer
// stops at it: the writes queued after it on that thread are discarded
// (they may build on the checkpoint that failed, and a thread is always
// stored as a prefix of what was queued), and the error — wrapping
// ErrWriteFailed and the inner saver's error, naming the write and how
// many later ones were discarded — is returned by every later call on that
// thread until Flush returns it. Flush returns every pending error once and
// clears it; the thread then accepts writes again. Removals are the
// exception: they work on what is stored, so the error does not refuse
// them; one that deletes the whole thread (DeleteThread, Prune with
// PruneDelete — as an erasure does) starts the thread afresh and leaves
// the error for Flush.
//
// Arguments are checked before a write is queued (the same validation the
// savers apply, the metadata encoded, each new value encoded once with the
// inner saver's serializer when it exposes one), so bad input fails the
// call itself. What only the storage can decide — a parent checkpoint that
// is gone (checkpointer.ErrParentMissing), an erased subject, a lost
// connection — surfaces at the next call on the thread.
//
// A put continuing a checkpoint is queued only when that checkpoint is
// the one this saver last queued (or wrote) on the thread and namespace,
// and no removal went through this saver since (DeleteThread, Prune,
// DeleteCheckpoint on the thread; DeleteForRuns or a Sweep on any). Any
// other continuing put — the first step after a resume, a fork, a put
// after a removal — waits for the thread's queue and is written before
// Put returns, so checkpointer.ErrParentMissing is reported by Put itself
// where it can arise. Removals this saver does not see (another process,
// the inner saver's own Retention sweeper) are reported at the next call:
// run retention through the decorator instead
// (checkpointer.StartSweeper(policy, interval, d.Sweep, nil)).
//
// # Batches and audit trails
//
// Consecutive queued writes of a thread go to the inner saver's
// ImportThread, one transaction for up to Options.MaxBatch of them, when
// they carry no run config (Config.Extra, Config.Metadata), no task path
// and no audit record, which ImportThread does not take; the others are
// written one by one, in order. A batch that fails is written again one
// by one, so the writes before the failing one are stored.
//
// Put an audit.Saver outside the decorator (audit.NewSaver(durableSaver,
// …)); inside, a batch would be recorded as one import. When the inner
// saver inserts audit records in its writes' transactions
// (checkpointer.TxRecorder: PostgreSQL, SQLite with the trail in the data
// file), so does the decorator: a queued write's record is queued with it
// and committed with it, so a queued write that fails or is lost in a
// crash leaves no record, and a record becomes durable when its write
// does, not when Put returns; the commit tells the trail
// (checkpointer.RecordRow.Stored), which chains the record soon after.
// Otherwise the trail records each call when it is made.
//
// # The loss window
//
// A process that dies (kill -9, power loss) loses at most the writes still
// queued: those Put and PutWrites acknowledged since the thread's last
// wait. After Flush (or any call on the thread) returns without error,
// every write queued before it is committed by the inner saver. What is
// stored is always a prefix of each thread's queue, in order: never a
// checkpoint without its parent chain, never writes without their
// checkpoint.
//
// A queued write keeps what its caller passed: its values, metadata and
// writes are copied when queued (maps, slices, arrays, pointers and
// exported struct fields, those promoted from an embedded struct of an
// unexported type included, which a serializer stores as the outer
// struct's own), so a caller may change them after Put returns. Channels,
// functions and other unexported struct fields (a *big.Int's digits) are
// kept by reference. A value nested deeper than twice what a
// serializer stores (serde.MaxDepth), or a cycle, fails its Put or
// PutWrites with serde.ErrUnsupportedValue, as a synchronous put fails.
// A put stores only the values of its newVersions' channels (as
// LangGraph's savers and every memvault saver do), so only those are
// copied; the others, the unchanged state a graph passes with every put,
// are kept by reference and never read by a memvault saver (a saver
// keeping Python's inline values reads only immutable ones: strings,
// numbers, booleans). An inner saver of your own must read no more.
package durable
