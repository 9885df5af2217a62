package checkpointer

import (
	"context"
	"iter"
	"time"
)

// Config addresses a checkpoint: LangGraph's config["configurable"] plus the
// run's config["metadata"].
type Config struct {
	// ThreadID identifies the conversation; required by every operation.
	ThreadID string
	// CheckpointNS is the (sub)graph namespace; "" is the root graph.
	CheckpointNS string
	// CheckpointID selects one checkpoint; empty means the latest.
	CheckpointID string
	// Extra holds the other configurable keys (for example user_id). Scalar
	// values whose keys are not excluded are copied into stored metadata
	// (see SerializableMetadata).
	Extra map[string]any
	// Metadata is the run's config["metadata"] (run_id lives here); merged
	// into stored metadata like Extra.
	Metadata map[string]any
}

// Checkpoint is a snapshot of graph state (format v4).
type Checkpoint struct {
	// V is the format version; writers produce 4.
	V int
	// ID is a UUIDv6 (see NewID); checkpoints order by ID as text.
	ID string
	// TS is when the checkpoint was made.
	TS time.Time
	// ChannelValues maps channel name to value. Only channels present in
	// ChannelVersions are persisted.
	ChannelValues map[string]any
	// ChannelVersions maps channel name to its version. Versions compare as
	// strings (see NextVersion); integer versions written by JS LangGraph are
	// carried as their decimal text.
	ChannelVersions map[string]string
	// VersionsSeen maps node id to the channel versions it has seen.
	VersionsSeen map[string]map[string]string
	// UpdatedChannels lists (sorted) the channels written by the step that
	// produced this checkpoint; nil when unknown.
	UpdatedChannels []string
}

// Metadata is a checkpoint's metadata: source, step, parents, run_id and any
// custom keys. It is stored as plain JSON (never encrypted) so that it can be
// filtered on.
type Metadata map[string]any

// Write is one value a task writes to a channel.
type Write struct {
	Channel string
	Value   any
}

// PendingWrite is a write stored against a checkpoint and not yet applied.
type PendingWrite struct {
	TaskID  string
	Channel string
	Value   any
}

// Tuple is a checkpoint with its config, metadata, parent and pending writes.
type Tuple struct {
	Config        Config
	Checkpoint    *Checkpoint
	Metadata      Metadata
	ParentConfig  *Config
	PendingWrites []PendingWrite
}

// ListOptions narrows List.
type ListOptions struct {
	// Filter keeps checkpoints whose metadata contains it, with PostgreSQL
	// JSONB containment semantics (metadata @> filter): nested objects match
	// partially, arrays match when every filter element is contained.
	Filter map[string]any
	// Before keeps checkpoints whose id sorts before Before.CheckpointID.
	Before *Config
	// Limit caps the number of tuples; 0 means no limit.
	Limit int
	// AllNamespaces lists every namespace of the thread instead of only
	// cfg.CheckpointNS. LangGraph does this when checkpoint_ns is absent from
	// the config; Go has no absent string, so it is explicit here.
	AllNamespaces bool
	// AllThreads lets a non-nil cfg with an empty ThreadID list every thread
	// (in cfg.CheckpointNS, or in all namespaces with AllNamespaces), as JS
	// LangGraph does when thread_id is absent. Without it such a cfg is
	// refused with ErrMissingThreadID: an empty id — an unset variable, say
	// — must never turn "this thread" into "every thread".
	AllThreads bool
}

// Saver persists checkpoints. Implementations are safe for concurrent use.
type Saver interface {
	// GetTuple returns the checkpoint cfg names (the latest of the thread and
	// namespace when cfg.CheckpointID is empty), or (nil, nil) when absent.
	GetTuple(ctx context.Context, cfg Config) (*Tuple, error)
	// List streams matching checkpoints newest first. A nil cfg lists every
	// thread and namespace; a cfg without a thread id lists every thread in
	// cfg.CheckpointNS (or in all namespaces with opt.AllNamespaces), as JS
	// LangGraph does, only with opt.AllThreads (ErrMissingThreadID
	// otherwise); a cfg.CheckpointID keeps only that checkpoint.
	// Iteration stops at the first error, which is yielded.
	List(ctx context.Context, cfg *Config, opt ListOptions) iter.Seq2[*Tuple, error]
	// Put stores cp and its metadata under cfg's thread and namespace, with
	// cfg.CheckpointID as its parent, and returns the config of the new
	// checkpoint. Only channels in newVersions have their values written;
	// other channels keep the values stored at their current version.
	// As LangGraph's savers insert: a value already stored at a (channel,
	// version) is kept (first value wins), and a checkpoint put again
	// under its id gets the new document and metadata but keeps the
	// parent it was first stored with.
	Put(ctx context.Context, cfg Config, cp *Checkpoint, md Metadata, newVersions map[string]string) (Config, error)
	// PutWrites stores pending writes of task taskID against the checkpoint
	// cfg names, each under (taskID, idx): its position in writes, or for
	// the special channels ChannelError, ChannelScheduled, ChannelInterrupt
	// and ChannelResume LangGraph's fixed negative index. A call whose
	// writes all target special channels overwrites existing writes with
	// the same keys; any other call keeps them, so retries are idempotent.
	PutWrites(ctx context.Context, cfg Config, writes []Write, taskID, taskPath string) error
	// DeleteThread removes every checkpoint, value and write of the thread, in
	// all namespaces. Deleting an unknown thread is not an error; an empty
	// threadID is ErrMissingThreadID.
	DeleteThread(ctx context.Context, threadID string) error
	// NextVersion returns the channel version that follows current ("" means
	// none yet).
	NextVersion(current string) string
}

// PruneStrategy says what Prune keeps.
type PruneStrategy int

const (
	// PruneKeepLatest keeps the latest checkpoint of each namespace of the
	// thread (with its writes and the values it references) and removes the
	// rest.
	PruneKeepLatest PruneStrategy = iota
	// PruneDelete removes the threads entirely.
	PruneDelete
)

// Pruner is implemented by savers that can shrink threads.
type Pruner interface {
	Prune(ctx context.Context, threadIDs []string, strategy PruneStrategy) error
}

// Copier is implemented by savers that can copy a thread, with every
// checkpoint, namespace, value and write, to a new thread id.
//
// CopyThread copies every row of the source thread — checkpoints, values,
// pending writes, writes whose checkpoint is not stored included — in one
// transaction, each replacing the destination's row with the same key
// (checkpoint id; namespace, channel and version; checkpoint, task and
// index); the destination's other rows stay. Values sealed for their
// thread by an encrypting serializer are re-sealed for the destination.
type Copier interface {
	CopyThread(ctx context.Context, srcThreadID, dstThreadID string) error
}

// CheckpointDeleter is implemented by savers that delete one checkpoint.
// Every saver of this module implements it.
type CheckpointDeleter interface {
	// DeleteCheckpoint deletes the checkpoint cfg names (ThreadID and
	// CheckpointID required; CheckpointNS "" is the root namespace) with
	// its pending writes and the channel values no other checkpoint of the
	// thread and namespace uses, in one transaction. Its children keep
	// their parent id, now dangling, as after DeleteForRuns, and a v<4
	// child (written before LangGraph 0.2.x) keeps the pending sends it
	// reads from the deleted checkpoint's __pregel_tasks writes, which
	// stay for it. Deleting a checkpoint that does not exist is not an
	// error.
	DeleteCheckpoint(ctx context.Context, cfg Config) error
}

// RunDeleter is implemented by savers that can delete the checkpoints (and
// their writes) whose metadata.run_id is one of runIDs.
type RunDeleter interface {
	DeleteForRuns(ctx context.Context, runIDs []string) error
}
