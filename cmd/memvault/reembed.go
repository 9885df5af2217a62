package main

import (
	"fmt"
	"os"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"
	"golang.org/x/term"

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
			return withHandle(cmd.Context(), g, func(h *handle) error {
				if !h.NeedsReembed() {
					fmt.Fprintln(cmd.OutOrStdout(), "the store's vectors are already made by the configured embedder; nothing to do")
					return nil
				}
				if dryRun {
					fmt.Fprintf(cmd.OutOrStdout(), "would re-embed the store's vectors from %s to %s\n", h.Embedder.Name(), "the primary key's embedder")
					return nil
				}
				opt := store.ReembedOptions{BatchSize: batch}
				var bar *progressbar.ProgressBar
				if !g.json && term.IsTerminal(int(os.Stderr.Fd())) {
					bar = progressbar.NewOptions64(-1, progressbar.OptionSetWriter(os.Stderr), progressbar.OptionSetDescription("re-embedding"), progressbar.OptionShowCount(), progressbar.OptionClearOnFinish())
					opt.Progress = func(done, total int64) {
						bar.ChangeMax64(total)
						_ = bar.Set64(done)
					}
				}
				n, err := h.Reembed(cmd.Context(), opt)
				if bar != nil {
					_ = bar.Finish()
				}
				if err != nil {
					return err
				}
				if g.json {
					return printJSON(cmd.OutOrStdout(), map[string]any{"reembedded": n})
				}
				fmt.Fprintf(cmd.OutOrStdout(), "re-embedded %d vectors\n", n)
				return nil
			})
		},
	}
	cmd.Flags().IntVar(&batch, "batch", 256, "vectors per embedding call and transaction")
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "only say whether re-embedding is needed")
	return cmd
}
