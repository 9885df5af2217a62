package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/memvault/memvault/audit"
	"github.com/memvault/memvault/store"
)

var errAuditOff = errors.New("the audit trail is off (set MEMVAULT_AUDIT=true)")

// newAuditCmd is `memvault audit verify|show|anchor`.
func newAuditCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{Use: "audit", Short: "Verify, read and anchor the tamper-evident audit trail (MEMVAULT_AUDIT=true)"}
	var anchorFile string
	verify := &cobra.Command{
		Use:   "verify [--anchor FILE]",
		Short: "Check every record's place, link and MAC (and the anchors in FILE): exit 1 if the trail was edited, cut, extended, reordered or replaced",
		Long: `verify reads the whole audit trail in order and checks that each record follows the
one before, belongs to this database's chain (the data database's id), and carries a
MAC under the audit key of its epoch, derived from LANGGRAPH_AES_KEY or, for records
written before a key change, from a key in LANGGRAPH_AES_KEY_PREVIOUS. Records under
a key no longer configured are authenticated by the key change record after them.

A pending record (a write's, committed with it and chained shortly after) copied and
inserted again once chained fails verify; records of writes chained long after records
made later than them (withheld, or slow to commit) are counted in a warning.

Records cut off the end cannot be told from a trail that simply ended there: with
--anchor FILE (lines written by 'memvault audit anchor') verify also fails when the
trail is shorter than an anchor or differs from it at the anchor's record.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var anchors []audit.Anchor
			if anchorFile != "" {
				f, err := os.Open(anchorFile)
				if err != nil {
					return fmt.Errorf("--anchor: %w", err)
				}
				anchors, err = audit.ReadAnchors(f)
				f.Close()
				if err != nil {
					return fmt.Errorf("--anchor %s: %w", anchorFile, err)
				}
			}
			cfg, err := g.config()
			if err != nil {
				return err
			}
			// verify decrypts no stored value: it must run where values or
			// data keys are under a key not loaded (an auditor holding the
			// current key, after a rotation), as the census does.
			cfg.DangerousSkipKeyCheck = true
			return withConfig(cmd.Context(), cfg, func(h *handle) error {
				if h.Audit == nil {
					return errAuditOff
				}
				rep, err := h.Audit.Check(cmd.Context(), anchors)
				if g.json {
					out := map[string]any{"records": rep.Records, "ok": err == nil, "vouched": rep.Vouched,
						"anchors": rep.Anchors, "seq": rep.Seq, "link": rep.Link, "database_id": h.Audit.DatabaseID(), "pending": rep.Pending}
					if rep.Pending > 0 {
						out["oldest_pending"] = rep.OldestPending
					}
					out["late"] = rep.Late
					if rep.Late > 0 {
						out["first_late"] = rep.FirstLate
					}
					if err != nil {
						out["error"] = err.Error()
					}
					if perr := printJSON(cmd.OutOrStdout(), out); perr != nil {
						return perr
					}
					return err
				}
				if err != nil {
					return fmt.Errorf("%w (after %d good records)", err, rep.Records)
				}
				w := cmd.OutOrStdout()
				fmt.Fprintf(w, "audit trail intact: %d records\n", rep.Records)
				if rep.Pending > 0 {
					// Durable records of writes, MACs checked, that no
					// chainer had linked yet: this command's exit chains
					// them (as every audited process's does).
					fmt.Fprintf(w, "%d more records are pending (durable, authenticated, not yet chained; the oldest from %s)\n",
						rep.Pending, rep.OldestPending.Format(time.RFC3339))
				}
				if rep.Vouched > 0 {
					fmt.Fprintf(w, "%d of them are under an audit key no longer configured, authenticated by the key change after them\n", rep.Vouched)
				}
				if rep.Late > 0 {
					// Not proof of tampering (audit.LateAfter): a
					// reviewer looks them up.
					fmt.Fprintf(w, "warning: %d records of writes were chained more than %s after a record made later than them (the first: record %d): "+
						"a pending record withheld and inserted later shows so, as does a write that took that long to commit "+
						"(a stalled transaction, a write queued by durability mode exit) or a process whose clock is that far behind\n",
						rep.Late, audit.LateAfter, rep.FirstLate)
				}
				if anchorFile != "" {
					fmt.Fprintf(w, "it extends all %d anchors in %s\n", rep.Anchors, printable(anchorFile))
				}
				return nil
			})
		},
	}
	verify.Flags().StringVar(&anchorFile, "anchor", "", "also check the trail against the anchors in this file (one JSON line each)")

	var subject, since string
	show := &cobra.Command{
		Use:   "show [--subject S] [--since T]",
		Short: "Print the audit records, oldest first (never values; control characters escaped)",
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
				enc := json.NewEncoder(w) // JSON lines: one record a line
				return h.Audit.Records(cmd.Context(), f, func(r audit.Record) error {
					if g.json {
						return enc.Encode(r)
					}
					_, err := fmt.Fprintf(w, "%d\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Seq, r.Time.Format(time.RFC3339Nano), printable(r.Principal),
						printable(r.Op), auditTarget(r.Op, r.Target), printable(r.Subject), printable(r.KeyID))
					return err
				})
			})
		},
	}
	show.Flags().StringVar(&subject, "subject", "", "only the records of reads and changes of this subject's data (listings of every thread, sweeps, prefix deletes and re-encryptions included: they may have read or changed it)")
	show.Flags().StringVar(&since, "since", "", "only records since this time (RFC 3339) or this long ago (24h)")

	var out string
	anchor := &cobra.Command{
		Use:   "anchor [--out FILE]",
		Short: "Record an anchor and print the trail's head (one JSON line) for a sink the database's writers cannot rewrite",
		Long: `anchor appends an audit.anchor record and prints the trail's head — its sequence
number, link, the database id, its time, and a MAC under the audit key — as one JSON
line on standard output (for a log shipper), or appends it to FILE with --out (and
syncs it). Keep the anchors where whoever can write the database cannot rewrite them,
and run 'memvault audit verify --anchor FILE': it detects a trail cut back or rolled
back to before any anchor. Anchor as often as the records you would accept to lose
undetected (every minute from a timer, say).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return withHandle(cmd.Context(), g, func(h *handle) error {
				if h.Audit == nil {
					return errAuditOff
				}
				a, err := h.Audit.Anchor(cmd.Context())
				if err != nil {
					return err
				}
				line, err := json.Marshal(a)
				if err != nil {
					return err
				}
				line = append(line, '\n')
				if out == "" || g.json {
					// With --json the anchor is the command's one object,
					// whether or not it is also appended to --out.
					if _, err := cmd.OutOrStdout().Write(line); err != nil || out == "" {
						return err
					}
				}
				f, err := os.OpenFile(out, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
				if err != nil {
					return fmt.Errorf("--out: %w", err)
				}
				if _, err := f.Write(line); err != nil {
					f.Close()
					return fmt.Errorf("--out: %w", err)
				}
				if err := f.Sync(); err != nil {
					f.Close()
					return fmt.Errorf("--out: %w", err)
				}
				return f.Close()
			})
		},
	}
	anchor.Flags().StringVar(&out, "out", "", "append the anchor to this file instead of printing it")
	cmd.AddCommand(verify, show, anchor)
	return cmd
}

// auditTarget prints a record's target as the other commands print
// namespaces and items (nsPath, itemPath: labels joined with '/'). A store
// operation (item.*) records its namespace's labels joined with '.', then
// '/' and the key when there is one; labels cannot hold a '.', so the part
// before the first '/' is the namespace. (A label holding a '/' cannot be
// told from the key: from that '/' on, the target prints as recorded.)
// Other targets — thread ids, subjects — print as they are; --json keeps
// every target as recorded.
func auditTarget(op, target string) string {
	if !strings.HasPrefix(op, "item.") {
		return printable(target)
	}
	nsText, key, hasKey := strings.Cut(target, "/")
	var ns store.Namespace
	if nsText != "" {
		ns = strings.Split(nsText, ".")
	}
	if !hasKey {
		return nsPath(ns)
	}
	return itemPath(ns, key)
}
