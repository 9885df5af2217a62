package main

import (
	"encoding/json"
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"
)

// newCensusCmd is `keys census`: how many stored values each key still
// protects, counted in SQL without decrypting anything.
func newCensusCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "census",
		Short: "Count stored values per table, cipher and key id, from SQL alone (decrypts nothing)",
		Long: `census counts the stored values of every table (checkpoint_blobs,
checkpoint_writes, store) by cipher and by the key id in their envelope header,
without decrypting anything. Run it before retiring a previous key: no row may
be left under it.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := g.config()
			if err != nil {
				return err
			}
			// The census decrypts nothing and must run where some values
			// are under a key that is not loaded: that is what it finds.
			cfg.DangerousSkipKeyCheck = true
			cfg.Embeddings = "none"
			return withConfig(cmd.Context(), cfg, func(h *handle) error {
				rows, err := h.Census(cmd.Context())
				if err != nil {
					return err
				}
				if g.json {
					enc := json.NewEncoder(cmd.OutOrStdout()) // JSON lines: one row a line
					for _, r := range rows {
						if err := enc.Encode(r); err != nil {
							return err
						}
					}
					return nil
				}
				w := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
				fmt.Fprintln(w, "TABLE\tCIPHER\tKEY ID\tROLE\tROWS")
				for _, r := range rows {
					fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%d\n", r.Table, orDash(r.Cipher), orDash(r.KeyID), r.Role, r.Rows)
				}
				return w.Flush()
			})
		},
	}
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
