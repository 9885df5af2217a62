package core

import (
	"cmp"
	"context"
	"fmt"
	"time"

	"github.com/memvault/memvault/checkpointer"
)

// SweepRule is a checked RetentionPolicy as a driver applies it to a batch.
type SweepRule struct {
	// Floor, when not empty, deletes the threads whose checkpoint ids are
	// all datable (checkpointer.IsDatableID) and all sort before it.
	Floor string
	// KeepLatest, when > 0, keeps that many newest checkpoints of each
	// (thread, namespace) of the threads that stay.
	KeepLatest int
}

// SweepHooks are the storage operations of a driver's Sweep.
type SweepHooks struct {
	// Threads returns up to limit thread ids greater than after, in
	// ascending order (after "" starts at the first).
	Threads func(ctx context.Context, after string, limit int) ([]string, error)
	// Batch applies rule to threads in one transaction, rolled back when
	// dryRun, and counts the rows it removed (ThreadsDeleted, Checkpoints,
	// Writes, Blobs). Idle threads go first, so KeepLatest works on the
	// threads that stay.
	Batch func(ctx context.Context, threads []string, rule SweepRule, dryRun bool) (checkpointer.SweepReport, error)
	// DefaultBatch is the driver's number of threads per batch when
	// SweepOptions.BatchThreads is 0; 0 means checkpointer.DefaultSweepBatch.
	DefaultBatch int
}

// maxSweepBatch bounds SweepOptions.BatchThreads: a caller's number never
// sizes an allocation beyond it.
const maxSweepBatch = 10000

// Sweep implements checkpointer.Sweeper for a driver: the policy and
// options are checked, then the threads are paged through in key order
// and each page is one Batch (one transaction). Paging by key rather than
// by offset keeps each page one index range scan, whatever was deleted
// before it.
func Sweep(ctx context.Context, driver string, h SweepHooks, policy checkpointer.RetentionPolicy, opt checkpointer.SweepOptions) (checkpointer.SweepReport, error) {
	rep := checkpointer.SweepReport{DryRun: opt.DryRun}
	if err := policy.Validate(); err != nil {
		return rep, fmt.Errorf("%s: sweep: %w", driver, err)
	}
	if opt.BatchThreads < 0 {
		return rep, fmt.Errorf("%s: sweep: %w: BatchThreads %d is negative", driver, checkpointer.ErrInvalidPolicy, opt.BatchThreads)
	}
	if err := ctx.Err(); err != nil {
		return rep, fmt.Errorf("%s: %w", driver, err)
	}
	if policy.Empty() {
		return rep, nil
	}
	batch := opt.BatchThreads
	if batch == 0 {
		batch = cmp.Or(h.DefaultBatch, checkpointer.DefaultSweepBatch)
	}
	batch = min(batch, maxSweepBatch)
	rule := SweepRule{KeepLatest: policy.KeepLatest}
	if policy.IdleTTL > 0 {
		now := opt.Now
		if now.IsZero() {
			now = time.Now()
		}
		rule.Floor = checkpointer.IDFloor(now.Add(-policy.IdleTTL))
	}
	after := ""
	for {
		if err := ctx.Err(); err != nil {
			return rep, fmt.Errorf("%s: sweep: %w", driver, err)
		}
		threads, err := h.Threads(ctx, after, batch)
		if err != nil {
			return rep, fmt.Errorf("%s: sweep: %w", driver, err)
		}
		if len(threads) == 0 {
			return rep, nil
		}
		r, err := h.Batch(ctx, threads, rule, opt.DryRun)
		if err != nil {
			return rep, fmt.Errorf("%s: sweep: %w", driver, err)
		}
		r.ThreadsScanned, r.Batches = int64(len(threads)), 1
		rep.Add(r)
		if opt.Progress != nil {
			opt.Progress(rep)
		}
		if len(threads) < batch {
			return rep, nil
		}
		after = threads[len(threads)-1]
	}
}

// CheckOptions is the check every saver's constructor runs on the options
// all of them share, so that each refuses the same ones with the same
// sentinels: an unknown version style (checkpointer.ErrInvalidVersionStyle)
// and a retention policy with a negative field (checkpointer.ErrInvalidPolicy).
func CheckOptions(driver string, style checkpointer.VersionStyle, policy checkpointer.RetentionPolicy) error {
	if err := style.Validate(); err != nil {
		return fmt.Errorf("%s: %w", driver, err)
	}
	if err := policy.Validate(); err != nil {
		return fmt.Errorf("%s: %w", driver, err)
	}
	return nil
}
