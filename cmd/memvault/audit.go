package main

import (
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/memvault/memvault/audit"
)

var errAuditOff = errors.New("the audit trail is off (set MEMVAULT_AUDIT=true)")

// newAuditCmd is `memvault audit verify|show`.
func newAuditCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{Use: "audit", Short: "Verify and read the tamper-evident audit trail (MEMVAULT_AUDIT=true)"}
	verify := &cobra.Command{
		Use:   "verify",
		Short: "Check every record's place and MAC: exit 1 if the trail was edited, cut, extended or reordered",
		Long: `verify reads the whole audit trail in order and checks that each record follows the
one before and carries the MAC chaining it to it, under the audit key derived from
LANGGRAPH_AES_KEY (or a previous key). It prints how many records it checked: keep
that number somewhere else, since records cut off the end cannot be told from a
trail that simply ended there.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return withHandle(cmd.Context(), g, func(h *handle) error {
				if h.Audit == nil {
					return errAuditOff
				}
				n, err := h.Audit.Verify(cmd.Context())
				if g.json {
					out := map[string]any{"records": n, "ok": err == nil}
					if err != nil {
						out["error"] = err.Error()
					}
					if perr := printJSON(cmd.OutOrStdout(), out); perr != nil {
						return perr
					}
					return err
				}
				if err != nil {
					return fmt.Errorf("%w (after %d good records)", err, n)
				}
				fmt.Fprintf(cmd.OutOrStdout(), "audit trail intact: %d records\n", n)
				return nil
			})
		},
	}
	var subject, since string
	show := &cobra.Command{
		Use:   "show [--subject S] [--since T]",
		Short: "Print the audit records, oldest first (never values)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var f audit.Filter
			f.Subject = subject
			if since != "" {
				t, err := time.Parse(time.RFC3339, since)
				if err != nil {
					d, derr := time.ParseDuration(since)
					if derr != nil || d < 0 {
						return usagef("--since %q: want a time (RFC 3339) or a duration such as 24h", since)
					}
					t = time.Now().Add(-d)
				}
				f.Since = t
			}
			return withHandle(cmd.Context(), g, func(h *handle) error {
				if h.Audit == nil {
					return errAuditOff
				}
				w := cmd.OutOrStdout()
				return h.Audit.Records(cmd.Context(), f, func(r audit.Record) error {
					if g.json {
						return printJSON(w, r)
					}
					_, err := fmt.Fprintf(w, "%d\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Seq, r.Time.Format(time.RFC3339Nano), r.Principal, r.Op, r.Target, r.Subject, r.KeyID)
					return err
				})
			})
		},
	}
	show.Flags().StringVar(&subject, "subject", "", "only this subject's records")
	show.Flags().StringVar(&since, "since", "", "only records since this time (RFC 3339) or this long ago (24h)")
	cmd.AddCommand(verify, show)
	return cmd
}
