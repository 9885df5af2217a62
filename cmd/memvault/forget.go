package main

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/memvault/memvault/keys"
	"github.com/memvault/memvault/vault"
)

// exitPending is the exit code of a command whose work is recorded but not
// finished (an erasure waiting for readers): run it again.
const exitPending = 3

// pendingError marks an error after which running the command again
// finishes the work.
type pendingError struct{ error }

func (e pendingError) Unwrap() error { return e.error }

// newForgetCmd is `memvault forget SUBJECT`: erasure by key destruction.
func newForgetCmd(g *globals) *cobra.Command {
	var wait, lockWait time.Duration
	var allowEmpty bool
	cmd := &cobra.Command{
		Use:   "forget SUBJECT",
		Short: "Erase a data subject: destroy its keys, delete its threads and memories, print a receipt",
		Long: `forget erases everything of one data subject (per-subject keys must be on:
MEMVAULT_SUBJECT_THREAD_SEPARATOR, MEMVAULT_SUBJECT_THREAD_METADATA and/or
MEMVAULT_SUBJECT_NAMESPACE). In order:

 1. it records the erasure in the key table (MEMVAULT_KEY_TABLE) and destroys
    the subject's data keys, in one transaction: from then on every value
    sealed under them fails to decrypt, here and in any copy or backup of the
    data, and a write sealed under them, by any process, fails;
 2. it deletes the subject's threads and memories, after the writes that
    found the keys live have committed;
 3. it makes sure no copy of the destroyed keys stays in the key table's
    storage (SQLite: the file and its log; PostgreSQL: the table's file),
    waiting up to --wait for readers that still hold one;
 4. it prints an erasure receipt (subject, time, destroyed key ids, rows
    deleted) authenticated under the audit key derived from LANGGRAPH_AES_KEY.

If step 3 cannot finish in time, the receipt says PENDING and why, and forget
exits 3: run it again (once the reader named is gone) to finish the same
erasure. A forget killed part-way is finished the same way; its receipt then
names every key the erasure destroyed.

A subject that owns nothing here — no data key, no erasure begun, no thread,
no memory — is refused (exit 1), recording nothing: a mistyped subject
would otherwise print a receipt that reads like an erasure while the real
subject's data stays. --allow-empty records the erasure anyway (a subject
whose data never reached this database, or went by other means).

One forget of a database runs its first steps at a time (the erasure lock): a
second one waits up to --lock-wait, then fails, having changed nothing; run it
again once the first ends.

Erasure holds against restored backups of the data only if no copy of the key
table from before survives: keep the key table's backups shorter than your
erasure window.`,
		Args: subjectArg,
		RunE: func(cmd *cobra.Command, args []string) error {
			if wait < 0 {
				return usagef("--wait %s: want 0s (do not wait) or more", wait)
			}
			if lockWait < 0 {
				return usagef("--lock-wait %s: want 0s (do not wait) or more", lockWait)
			}
			// vault: negative is "do not wait", 0 its default.
			w, lw := wait, lockWait
			if w == 0 {
				w = -1
			}
			if lw == 0 {
				lw = -1
			}
			return withHandle(cmd.Context(), g, func(h *handle) error {
				stderr := cmd.ErrOrStderr()
				r, err := h.ForgetWith(cmd.Context(), args[0], vault.ForgetOptions{Wait: w, LockWait: lw, RefuseEmpty: !allowEmpty, Progress: func(msg string) {
					fmt.Fprintln(stderr, "memvault: forget: "+msg)
				}})
				if errors.Is(err, vault.ErrNothingToForget) {
					return fmt.Errorf("%w (mistyped? `memvault keys census` lists the subjects with keys; --allow-empty records the erasure anyway)", err)
				}
				if r.Subject == "" { // nothing was started
					return err
				}
				if g.json {
					if perr := printJSON(cmd.OutOrStdout(), r); perr != nil {
						return perr
					}
				} else {
					printReceipt(cmd.OutOrStdout(), r)
				}
				if err != nil {
					return pendingError{err}
				}
				return nil
			})
		},
	}
	cmd.Flags().DurationVar(&wait, "wait", keys.DefaultPurgeWait, "how long to wait for readers that still hold a copy of a destroyed key (0s: do not wait)")
	cmd.Flags().BoolVar(&allowEmpty, "allow-empty", false, "erase a subject that owns nothing here (no data key, thread or memory) instead of refusing it")
	cmd.Flags().DurationVar(&lockWait, "lock-wait", vault.DefaultForgetLockWait, "how long to wait while another forget of the database holds the erasure lock (0s: do not wait)")
	return cmd
}

// printReceipt writes an erasure receipt for people.
func printReceipt(w io.Writer, r keys.Receipt) {
	title := "erasure receipt"
	if r.Pending {
		title = "erasure receipt: PENDING (run forget again to finish)"
	}
	fmt.Fprintf(w, "%s\n  subject:          %s\n  time:             %s\n  keys destroyed:   %s\n  threads deleted:  %d\n  memories deleted: %d\n",
		title, printable(r.Subject), r.Time.Format("2006-01-02T15:04:05.000000Z07:00"), strings.Join(r.KeyIDs, ", "), r.Threads, r.Items)
	if r.Pending {
		fmt.Fprintf(w, "  pending:          %s\n", printable(r.PendingReason))
	} else {
		fmt.Fprintf(w, "  finished:         %s\n", r.Finished.Format("2006-01-02T15:04:05.000000Z07:00"))
	}
	fmt.Fprintf(w, "  mac (audit key):  %s\n", r.MAC)
	if len(r.KeyIDs) == 0 && !r.Pending {
		fmt.Fprintln(w, "  (no data key of the subject existed: nothing of it was sealed under a data key)")
	}
}

// isPending reports whether err leaves work that a rerun finishes.
func isPending(err error) bool {
	var p pendingError
	return errors.As(err, &p)
}
