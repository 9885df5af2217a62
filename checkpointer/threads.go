package checkpointer

import (
	"context"
	"iter"
)

// ThreadInfo summarises one thread without loading its checkpoints.
type ThreadInfo struct {
	ThreadID string
	// Checkpoints counts the thread's checkpoints in every namespace.
	Checkpoints int
	// LatestCheckpointID is the greatest checkpoint id of the thread.
	LatestCheckpointID string
}

// ThreadLister is implemented by savers that can list their threads from
// the checkpoint rows alone: nothing is decoded or decrypted, so listing
// costs one query and works whatever keys are configured.
type ThreadLister interface {
	// ListThreads streams the threads, most recently checkpointed first.
	ListThreads(ctx context.Context) iter.Seq2[ThreadInfo, error]
}
