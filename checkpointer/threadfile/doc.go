// Package threadfile moves checkpoint threads between savers and databases:
// Export writes a thread to a file, Import reads it into any saver, Fork
// branches a thread from an earlier checkpoint. The memvault CLI's
// `threads export`, `threads import` and `threads fork` are these
// functions.
//
// A thread file is JSON lines, one checkpoint per line (Line), oldest first
// so that parents precede children, every line carrying Format. Values are
// carried losslessly as serde.JSONPlus (type, data) pairs: JSON inline when
// the type is "json", base64 otherwise. They are decoded from the source's
// format (and decrypted) on export and serialized under the target's
// settings (and encrypted) on import; metadata keeps memvault's JSON value
// model (package jsonvalue).
//
// Import validates the whole file before it writes anything (ids, each on
// one line only; versions, by the rule Put applies,
// checkpointer.ValidateVersion; parents; values; ErrInvalidFile names the
// line), reading it once to check it and again to write it: a file (an
// io.ReadSeeker) is not held in memory, other readers' lines are held as
// text, and a file that changed in between stops the import before the
// thread that changed. A parent must be earlier in the file or in the target, unless the
// export marked it missing (Line.ParentMissing: a thread whose oldest
// checkpoints a retention sweep pruned), so a pruned thread moves as it is
// while a file that lost its first lines is refused. Import writes each
// thread as one unit when the saver is a checkpointer.ThreadImporter, never
// rewrites a checkpoint the target has, and completes an import that
// stopped between a checkpoint and its writes when run again. With ImportOptions.IntVersions,
// Python-style versions ("<32 digits>.<fraction>") are renumbered 1, 2, …
// per thread, namespace and channel, keeping their order and forks apart,
// so that JS LangGraph can continue the threads.
package threadfile
