package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/memvault/memvault/store"
)

// newReembedCmd is `store reembed`: recompute the store's vectors with the
// embedder new vectors are made with (keyed or sealed under the primary key
// when encryption is on).
func newReembedCmd(g *globals) *cobra.Command {
	var batch int
	var dryRun bool
	cmd := &cobra.Command{
		Use:   "reembed",
		Short: "Recompute the store's vectors with the keyed or sealed embedder of the primary key",
		Long: `Recompute every stored vector with the embedder new vectors are made with:
with encryption on, the offline embedder keyed by the primary key, or the
configured model's vectors sealed by it; with per-subject keys, each data
subject's vectors rotated into the subject's own space. Needed for a store
whose vectors were made by the public embedder (before vector protection),
under a previous key, or before data subjects had vector spaces of their own
(keys reencrypt does it too). Batched, with progress; each batch commits, so an
interrupted run is simply run again.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if batch < 0 {
				return usagef("--batch must be >= 0")
			}
			return withHandle(cmd.Context(), g, needStore(func(h *handle) error {
				if !h.NeedsReembed() {
					if g.json {
						return printJSON(cmd.OutOrStdout(), map[string]any{"needed": false, "reembedded": 0})
					}
					fmt.Fprintln(cmd.OutOrStdout(), "the store's vectors are already made by the configured embedder; nothing to do")
					return nil
				}
				if dryRun {
					if g.json {
						return printJSON(cmd.OutOrStdout(), map[string]any{"needed": true, "dry_run": true, "reembedded": 0})
					}
					fmt.Fprintf(cmd.OutOrStdout(), "would re-embed the store's vectors from %s to %s\n", h.Embedder.Name(), "the primary key's embedder")
					return nil
				}
				p := g.newProgress(cmd.ErrOrStderr(), "re-embedding the store's vectors", "vectors", -1)
				n, err := h.Reembed(cmd.Context(), store.ReembedOptions{BatchSize: batch, Progress: p.Set})
				p.End(err)
				if err != nil {
					return err
				}
				if g.json {
					return printJSON(cmd.OutOrStdout(), map[string]any{"needed": true, "reembedded": n})
				}
				fmt.Fprintf(cmd.OutOrStdout(), "re-embedded %d vectors\n", n)
				return nil
			}))
		},
	}
	cmd.Flags().IntVar(&batch, "batch", 256, "vectors per embedding call and transaction")
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "only say whether re-embedding is needed")
	return cmd
}
