package core

import (
	"context"
	"fmt"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/checkpointer/internal/checks"
)

// Complete is every interface of package checkpointer that each memvault
// saver implements; drivers assert it at compile time.
type Complete interface {
	checkpointer.Saver
	checkpointer.Pruner
	checkpointer.Copier
	checkpointer.RunDeleter
	checkpointer.CheckpointDeleter
	checkpointer.ThreadLister
	checkpointer.ThreadImporter
	checkpointer.Reencrypter
	checkpointer.Sweeper
}

// Front is the checkpointer core's side of a saver's management methods:
// each checks its arguments and the context the same way on every driver,
// settles the trivial cases, then runs the driver's storage hook. A driver
// embeds it.
type Front struct {
	driver string
	h      Hooks
}

// Hooks are the storage operations a driver lends its Front; they get
// checked arguments, and the errors they return are final (prefixed with
// the driver's name).
type Hooks struct {
	// DeleteThread deletes every checkpoint, value and write of a thread.
	DeleteThread func(ctx context.Context, threadID string) error
	// Prune applies a known strategy to a non-empty list of threads.
	Prune func(ctx context.Context, threadIDs []string, strategy checkpointer.PruneStrategy) error
	// CopyThread copies src into dst (distinct threads).
	CopyThread func(ctx context.Context, src, dst string) error
	// DeleteForRuns deletes the checkpoints of a non-empty list of runs.
	DeleteForRuns func(ctx context.Context, runIDs []string) error
	// DeleteCheckpoint deletes one checkpoint with its writes and the values
	// no other checkpoint of its namespace references.
	DeleteCheckpoint func(ctx context.Context, thread, ns, id string) error
}

// NewFront returns the Front of a driver's storage operations; driver
// prefixes errors.
func NewFront(driver string, h Hooks) *Front { return &Front{driver: driver, h: h} }

// DeleteThread implements checkpointer.Saver's DeleteThread (see there).
func (f *Front) DeleteThread(ctx context.Context, threadID string) error {
	return DeleteThread(ctx, f.driver, threadID, f.h.DeleteThread)
}

// DeleteThread checks a DeleteThread call and runs it with hook: for the
// driver's Front and for its transaction-bound twin.
func DeleteThread(ctx context.Context, driver, threadID string, hook func(context.Context, string) error) error {
	if err := checkpointer.ValidateThreadID(threadID); err != nil {
		return fmt.Errorf("%s: delete thread: %w", driver, err)
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("%s: %w", driver, err)
	}
	return hook(ctx, threadID)
}

// Prune implements checkpointer.Pruner: thread ids and the strategy are
// checked before anything is deleted; no threads is nothing to do.
func (f *Front) Prune(ctx context.Context, threadIDs []string, strategy checkpointer.PruneStrategy) error {
	if err := checks.ValidateThreadIDs(threadIDs); err != nil {
		return fmt.Errorf("%s: prune: %w", f.driver, err)
	}
	switch strategy {
	case checkpointer.PruneKeepLatest, checkpointer.PruneDelete:
	default:
		return fmt.Errorf("%s: prune: unknown strategy %d", f.driver, strategy)
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("%s: %w", f.driver, err)
	}
	if len(threadIDs) == 0 {
		return nil
	}
	return f.h.Prune(ctx, threadIDs, strategy)
}

// CopyThread implements checkpointer.Copier: both ids are checked — the
// source as text (a thread stored with a longer id before the limit can be
// copied to a shorter one), the destination, which is written, within
// checkpointer.MaxIDBytes — and a thread copied onto itself is left as it
// is.
func (f *Front) CopyThread(ctx context.Context, srcThreadID, dstThreadID string) error {
	if err := checkpointer.ValidateThreadID(srcThreadID); err != nil {
		return fmt.Errorf("%s: copy thread: %w", f.driver, err)
	}
	if err := checkpointer.ValidateStoredThreadID(dstThreadID); err != nil {
		return fmt.Errorf("%s: copy thread: %w", f.driver, err)
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("%s: %w", f.driver, err)
	}
	if srcThreadID == dstThreadID {
		return nil
	}
	return f.h.CopyThread(ctx, srcThreadID, dstThreadID)
}

// DeleteForRuns implements checkpointer.RunDeleter: run ids are checked;
// no runs is nothing to do.
func (f *Front) DeleteForRuns(ctx context.Context, runIDs []string) error {
	if err := checks.ValidateRunIDs(runIDs); err != nil {
		return fmt.Errorf("%s: delete for runs: %w", f.driver, err)
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("%s: %w", f.driver, err)
	}
	if len(runIDs) == 0 {
		return nil
	}
	return f.h.DeleteForRuns(ctx, runIDs)
}

// DeleteCheckpoint implements checkpointer.CheckpointDeleter (see there).
func (f *Front) DeleteCheckpoint(ctx context.Context, cfg checkpointer.Config) error {
	return DeleteCheckpoint(ctx, f.driver, cfg, f.h.DeleteCheckpoint)
}

// DeleteCheckpoint checks a DeleteCheckpoint call and runs it with hook:
// for the driver's Front and for its transaction-bound twin.
func DeleteCheckpoint(ctx context.Context, driver string, cfg checkpointer.Config, hook func(ctx context.Context, thread, ns, id string) error) error {
	if err := checks.ValidateDeleteCheckpoint(cfg); err != nil {
		return fmt.Errorf("%s: delete checkpoint: %w", driver, err)
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("%s: %w", driver, err)
	}
	return hook(ctx, cfg.ThreadID, cfg.CheckpointNS, cfg.CheckpointID)
}
