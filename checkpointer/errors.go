package checkpointer

import "errors"

// Sentinel errors, wrapped with %w by the backends.
var (
	// ErrMissingThreadID: the config has no thread id.
	ErrMissingThreadID = errors.New("checkpointer: missing thread_id in config")
	// ErrMissingCheckpointID: PutWrites needs the checkpoint the writes belong to.
	ErrMissingCheckpointID = errors.New("checkpointer: missing checkpoint_id in config")
	// ErrNilCheckpoint: Put was given no checkpoint.
	ErrNilCheckpoint = errors.New("checkpointer: nil checkpoint")
	// ErrInvalidCheckpoint: the checkpoint lacks an id or is otherwise unusable.
	ErrInvalidCheckpoint = errors.New("checkpointer: invalid checkpoint")
	// ErrNotFound: an operation needs a thread or checkpoint that does not exist.
	ErrNotFound = errors.New("checkpointer: not found")
	// ErrInvalidID: a thread id, namespace, checkpoint id, task id, task
	// path or channel name holding a NUL byte or invalid UTF-8 (refused
	// in every call), or, in a write, longer than MaxIDBytes (then it is
	// ErrIDTooLong as well). Every backend refuses them alike, before any
	// I/O (PostgreSQL's text type cannot store them), so a thread written
	// on one backend can always move to another.
	ErrInvalidID = errors.New("checkpointer: invalid id")
	// ErrIDTooLong: an identifier (thread id, namespace, checkpoint id,
	// task id, task path, channel or node name, channel version) longer
	// than MaxIDBytes in what would store it: Put (its config, checkpoint
	// id, channels, versions and node names), PutWrites (its config, task
	// id, task path and channels), CopyThread's destination and a thread
	// file's import. Every backend refuses it alike, before any I/O; the
	// error also matches ErrInvalidID and names the identifier and the
	// limit. Reads, listings and deletes (GetTuple, List, DeleteThread,
	// DeleteCheckpoint, Prune, DeleteForRuns, CopyThread's source, an
	// export) check the text only, not the length: a longer id finds
	// nothing where none was stored, and still reaches a thread an
	// earlier version stored without the limit (SQLite and memory had
	// none), so that it can be read, exported and deleted.
	ErrIDTooLong = errors.New("checkpointer: id too long")
	// ErrInvalidMetadata: metadata JSON cannot hold (NaN, an infinity,
	// invalid UTF-8, a channel…); it wraps the jsonvalue error saying which.
	ErrInvalidMetadata = errors.New("checkpointer: invalid metadata")
	// ErrInvalidVersion: an empty channel version, which Put and a thread
	// file's import refuse alike (ValidateVersion), or a stored version
	// that should be a number and is not (neither an integer nor LangGraph's
	// "<int>.<fraction>" string).
	ErrInvalidVersion = errors.New("checkpointer: invalid channel version")
	// ErrParentMissing: Put named a parent checkpoint (cfg.CheckpointID)
	// that is not stored when the put commits — a retention sweep,
	// Prune, DeleteThread, DeleteCheckpoint or DeleteForRuns removed it,
	// typically while the caller was working from it — and the new
	// checkpoint inherits values from it (a channel of its
	// ChannelVersions is not in newVersions). Storing it would keep a
	// checkpoint that lacks those values, and every checkpoint after it
	// would inherit the hole, so nothing is stored. Re-read the thread
	// (GetTuple) and continue from what is there, or start it again
	// (a Put without a parent, or one whose newVersions rewrite every
	// channel, never needs its parent).
	ErrParentMissing = errors.New("checkpointer: parent checkpoint is gone")
)
