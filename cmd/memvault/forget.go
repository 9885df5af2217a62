package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
)

// newForgetCmd is `memvault forget SUBJECT`: erasure by key destruction.
func newForgetCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "forget SUBJECT",
		Short: "Erase a data subject: destroy its keys, delete its threads and memories, print a receipt",
		Long: `forget erases everything of one data subject (per-subject keys must be on:
MEMVAULT_SUBJECT_THREAD_SEPARATOR and/or MEMVAULT_SUBJECT_NAMESPACE). It first
destroys the subject's data keys in the key table (MEMVAULT_KEY_TABLE): from then
on every value sealed under them fails to decrypt, here and in any copy or backup
of the data. It then deletes the subject's threads and memories, and prints an
erasure receipt (subject, time, destroyed key ids, rows deleted) authenticated
under the audit key derived from LANGGRAPH_AES_KEY.

Erasure holds against restored backups of the data only if no copy of the key
table from before survives: keep the key table's backups shorter than your
erasure window. Other processes stop decrypting the subject's values within a
minute (their key cache's lifetime).`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return withHandle(cmd.Context(), g, func(h *handle) error {
				r, err := h.Forget(cmd.Context(), args[0])
				if err != nil {
					return err
				}
				if g.json {
					return printJSON(cmd.OutOrStdout(), r)
				}
				w := cmd.OutOrStdout()
				fmt.Fprintf(w, "erasure receipt\n  subject:        %s\n  time:           %s\n  keys destroyed: %s\n  threads deleted: %d\n  memories deleted: %d\n  mac (audit key): %s\n",
					printable(r.Subject), r.Time.Format("2006-01-02T15:04:05.000000Z07:00"), strings.Join(r.KeyIDs, ", "), r.Threads, r.Items, r.MAC)
				if len(r.KeyIDs) == 0 {
					fmt.Fprintln(w, "  (the subject had no keys: nothing of it was sealed under a data key)")
				}
				return nil
			})
		},
	}
}
