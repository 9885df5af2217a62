package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/checkpointer/sqlitesaver"
)

// newSweepCmd is `threads sweep`: the retention policy of the environment
// (MEMVAULT_RETENTION_*), overridden by flags, applied once.
func newSweepCmd(g *globals) *cobra.Command {
	var (
		dryRun     bool
		idleTTL    time.Duration
		keepLatest int
		batch      int
	)
	cmd := &cobra.Command{
		Use:   "sweep [--dry-run] [--idle-ttl D] [--keep-latest N]",
		Short: "Apply the checkpoint retention policy: delete idle threads and/or old checkpoints",
		Long: `Apply a retention policy once, in batches of threads (one transaction each):
--idle-ttl deletes threads whose newest checkpoint is older than D (ages come from
the UUIDv6 checkpoint ids; threads with other ids are never deleted for idleness);
--keep-latest keeps the newest N checkpoints of each thread and namespace, with
their pending writes and every value they reference. Flags override
MEMVAULT_RETENTION_IDLE_TTL and MEMVAULT_RETENTION_KEEP_LATEST; a policy that
keeps everything is refused. --dry-run reports what would be removed.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := g.config()
			if err != nil {
				return err
			}
			policy := cfg.Retention
			if cmd.Flags().Changed("idle-ttl") {
				policy.IdleTTL = idleTTL
			}
			if cmd.Flags().Changed("keep-latest") {
				policy.KeepLatest = keepLatest
			}
			if err := policy.Validate(); err != nil {
				return usagef("%v", err)
			}
			if policy.Empty() {
				return usagef("sweep needs a policy: --idle-ttl D and/or --keep-latest N (or MEMVAULT_RETENTION_IDLE_TTL / MEMVAULT_RETENTION_KEEP_LATEST)")
			}
			if batch < 0 {
				return usagef("--batch %d: want a number of threads > 0", batch)
			}
			// This process sweeps once, now: no background sweeper too.
			cfg.RetentionSweepInterval = -1
			return withConfig(cmd.Context(), cfg, func(h *handle) error {
				sw, ok := h.Saver.(checkpointer.Sweeper)
				if !ok {
					return fmt.Errorf("this saver (%T) cannot sweep", h.Saver)
				}
				start := time.Now()
				// The number of threads is known only at the end: the
				// progress counts those scanned, after each batch, and
				// notes what was removed so far.
				verb := "removed"
				if dryRun {
					verb = "would remove"
				}
				p := g.newProgress(cmd.ErrOrStderr(), "sweeping ("+policy.String()+")", "threads scanned", -1)
				rep, err := sw.Sweep(cmd.Context(), policy, checkpointer.SweepOptions{DryRun: dryRun, BatchThreads: batch,
					Progress: func(r checkpointer.SweepReport) {
						p.SetNote(r.ThreadsScanned, fmt.Sprintf("%s %d threads, %d checkpoints, %d pending writes, %d values", verb, r.ThreadsDeleted, r.Checkpoints, r.Writes, r.Blobs))
					}})
				p.End(err)
				if err != nil {
					return err
				}
				if g.json {
					return printJSON(cmd.OutOrStdout(), struct {
						Policy     string  `json:"policy"`
						IdleTTL    string  `json:"idle_ttl,omitempty"`
						KeepLatest int     `json:"keep_latest,omitempty"`
						Seconds    float64 `json:"seconds"`
						checkpointer.SweepReport
					}{policy.String(), durationOrEmpty(policy.IdleTTL), policy.KeepLatest, time.Since(start).Seconds(), rep})
				}
				fmt.Fprintf(cmd.OutOrStdout(), "policy: %s\n%s %d threads, %d checkpoints, %d pending writes, %d values (%d threads scanned in %d batches, %s)\n",
					policy, verb, rep.ThreadsDeleted, rep.Checkpoints, rep.Writes, rep.Blobs, rep.ThreadsScanned, rep.Batches, time.Since(start).Round(time.Millisecond))
				return nil
			})
		},
	}
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "report what would be removed; remove nothing")
	cmd.Flags().DurationVar(&idleTTL, "idle-ttl", 0, "delete threads idle for longer than this (e.g. 720h; 0: keep idle threads)")
	cmd.Flags().IntVar(&keepLatest, "keep-latest", 0, "keep only the newest N checkpoints of each thread and namespace (0: keep all)")
	cmd.Flags().IntVar(&batch, "batch", 0, fmt.Sprintf("threads per transaction (default %d; %d on SQLite)", checkpointer.DefaultSweepBatch, sqlitesaver.SweepBatch))
	return cmd
}

func durationOrEmpty(d time.Duration) string {
	if d == 0 {
		return ""
	}
	return d.String()
}
