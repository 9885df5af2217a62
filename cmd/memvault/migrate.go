package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
)

func newMigrateCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "migrate",
		Short: "Create or upgrade the saver and store tables (MongoDB: indexes), and print the applied versions",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return withNewHandle(cmd.Context(), g, func(h *handle) error {
				vs, err := h.Migrations(cmd.Context())
				if err != nil {
					return err
				}
				if g.json {
					return printJSON(cmd.OutOrStdout(), map[string]any{"backend": h.Backend, "tables": vs})
				}
				fmt.Fprintf(cmd.OutOrStdout(), "%s database is up to date:\n", h.Backend)
				for _, v := range vs {
					switch {
					case len(v.Indexes) > 0: // MongoDB: a collection and its indexes
						fmt.Fprintf(cmd.OutOrStdout(), "  %-32s indexes %s\n", v.Table, strings.Join(v.Indexes, ", "))
					case v.Version == 0:
						fmt.Fprintf(cmd.OutOrStdout(), "  %-32s nothing to set up\n", v.Table)
					default:
						fmt.Fprintf(cmd.OutOrStdout(), "  %-32s version %d\n", v.Table, v.Version)
					}
				}
				return nil
			})
		},
	}
}
