package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/memvault/memvault/config"
	"github.com/memvault/memvault/reencrypt"
	"github.com/memvault/memvault/vault"
)

func newKeysCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{Use: "keys", Short: "Generate, check and rotate encryption keys"}

	var raw bool
	gen := &cobra.Command{
		Use:   "generate",
		Short: "Print a fresh key for LANGGRAPH_AES_KEY",
		Long: `generate prints a fresh 256-bit key as "base64:…", which memvault reads from
LANGGRAPH_AES_KEY. With --raw it prints 32 random characters instead (192 bits):
the raw form Python LangGraph reads, for databases shared with Python services.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			gen := config.GenerateKey
			if raw {
				gen = config.GenerateRawKey
			}
			k, err := gen()
			if err != nil {
				return err
			}
			if g.json {
				return printJSON(cmd.OutOrStdout(), map[string]string{"key": k})
			}
			fmt.Fprintln(cmd.OutOrStdout(), k)
			return nil
		},
	}
	gen.Flags().BoolVar(&raw, "raw", false, "32 raw characters that Python LangGraph also reads")

	check := &cobra.Command{
		Use:   "check",
		Short: "Show the configured encryption: mode, key sizes and key ids (never the keys)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := g.config()
			if err != nil {
				return err
			}
			info, err := config.DescribeKeys(cfg)
			if err != nil {
				return err
			}
			if g.json {
				return printJSON(cmd.OutOrStdout(), info)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "encryption: %s\n", info.Mode)
			for _, k := range info.Keys {
				// The envelope derives AES-256 record keys from the master
				// key whatever its size; "aes" uses the key as is.
				use := fmt.Sprintf("AES-%d", k.Bytes*8)
				if info.Mode == config.EncryptionEnvelope {
					use = "master key of AES-256-GCM record keys"
				}
				fmt.Fprintf(cmd.OutOrStdout(), "  %-8s key %s  %d bytes (%s)\n", k.Role, k.ID, k.Bytes, use)
			}
			if info.DangerousAllowPlaintext {
				fmt.Fprintln(cmd.OutOrStdout(), "  plaintext rows are accepted (MEMVAULT_ALLOW_PLAINTEXT)")
			}
			return nil
		},
	}

	var batch int
	var dryRun, compact bool
	reenc := &cobra.Command{
		Use:   "reencrypt",
		Short: "Rewrite every encrypted value under the primary key (resumable)",
		Long: `reencrypt reads every checkpoint value, pending write and memory, and rewrites
those not yet under the primary key (LANGGRAPH_AES_KEY), decrypting with the previous
keys (LANGGRAPH_AES_KEY_PREVIOUS). It works in batches, one transaction each; rows
already under the primary key are skipped, so an interrupted run can be restarted.
Once it reports nothing left to rewrite, the previous keys can be retired.

On SQLite it then compacts the database file (VACUUM, then empties the
write-ahead log), since SQLite leaves images of rewritten rows in its pages
that the previous key still opens. While another process holds the database
open in a read transaction the log cannot be emptied: the command says so and
exits 1; run it again once that process is done.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if batch < 0 {
				return usagef("--batch must be >= 0")
			}
			return withHandleNote(cmd.Context(), g, dryRun, reembedNote(dryRun), func(h *handle) error {
				return reencryptAll(cmd, g, h, batch, dryRun, compact)
			})
		},
	}
	reenc.Flags().IntVar(&batch, "batch", 500, "rows per transaction")
	reenc.Flags().BoolVar(&dryRun, "dry-run", false, "only count the rows that would be rewritten")
	reenc.Flags().BoolVar(&compact, "compact", false, "then rewrite the files so old ciphertexts leave the disk (SQLite: what it does anyway; PostgreSQL: VACUUM FULL, which locks each table)")

	rotateKEK := &cobra.Command{
		Use:   "rotate-kek",
		Short: "Re-wrap every data key under the current key-encryption key (rewrites no data)",
		Long: `rotate-kek re-wraps the per-subject data keys in the key table under the KEK of
the current LANGGRAPH_AES_KEY; keys wrapped under a previous master key
(LANGGRAPH_AES_KEY_PREVIOUS) are unwrapped with it. No checkpoint or memory row
is rewritten. Afterwards the previous master key is no longer needed for data
keys (values sealed under it directly still need keys reencrypt).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return withHandle(cmd.Context(), g, func(h *handle) error {
				st, err := h.RotateKEK(cmd.Context(), nil)
				if err != nil {
					return err
				}
				if g.json {
					return printJSON(cmd.OutOrStdout(), map[string]int{"scanned": st.Scanned, "rewrapped": st.Rewrapped})
				}
				fmt.Fprintf(cmd.OutOrStdout(), "re-wrapped %d of %d data keys; no data rows rewritten\n", st.Rewrapped, st.Scanned)
				return nil
			})
		},
	}
	rotateSubject := &cobra.Command{
		Use:   "rotate-subject SUBJECT",
		Short: "Give a subject a new data key (then keys reencrypt moves its values to it)",
		Args:  subjectArg,
		RunE: func(cmd *cobra.Command, args []string) error {
			return withHandle(cmd.Context(), g, func(h *handle) error {
				if err := h.RotateSubject(cmd.Context(), args[0]); err != nil {
					return err
				}
				if g.json {
					return printJSON(cmd.OutOrStdout(), map[string]any{"subject": args[0], "rotated": true})
				}
				fmt.Fprintf(cmd.OutOrStdout(), "%s has a new data key; run keys reencrypt to move its values to it\n", printable(args[0]))
				return nil
			})
		},
	}

	readmit := &cobra.Command{
		Use:   "readmit SUBJECT",
		Short: "Let an erased subject have data keys again (its destroyed keys stay destroyed)",
		Long: `After memvault forget, the subject stays erased: every write of its data, by any
process, fails, so that a process that still holds the subject's data cannot
bring it back. readmit lets the subject start again under new keys (a user who
returns under the same id). The erasure must have finished.`,
		Args: subjectArg,
		RunE: func(cmd *cobra.Command, args []string) error {
			return withHandle(cmd.Context(), g, func(h *handle) error {
				if err := h.Readmit(cmd.Context(), args[0]); err != nil {
					return err
				}
				if g.json {
					return printJSON(cmd.OutOrStdout(), map[string]any{"subject": args[0], "readmitted": true})
				}
				fmt.Fprintf(cmd.OutOrStdout(), "%s may have data keys again\n", printable(args[0]))
				return nil
			})
		},
	}

	cmd.AddCommand(gen, check, reenc, rotateKEK, rotateSubject, readmit, newCensusCmd(g))
	return cmd
}

// reembedNote is what keys reencrypt says, instead of the warning Open
// gives every other command ("re-embed them (memvault store reembed)"),
// when the store's vectors need re-embedding: this command does it itself.
// Other warnings are printed as they are.
func reembedNote(dryRun bool) func(warning string) string {
	return func(w string) string {
		switch {
		case !strings.Contains(w, "store reembed"):
			return "warning: " + w
		case dryRun:
			return "the store's vectors are not made by the primary key's embedder: keys reencrypt without --dry-run re-embeds them after re-encrypting the values"
		}
		return "the store's vectors are not made by the primary key's embedder: this run re-embeds them after re-encrypting the values"
	}
}

// reencryptAll is keys reencrypt: vault.Handle.ReencryptSteps with the
// progress of each step — the checkpoint values and writes, the memories,
// the re-embedding of the store's vectors — then one compaction of the
// file (SQLite always, PostgreSQL with --compact).
func reencryptAll(cmd *cobra.Command, g *globals, h *handle, batch int, dryRun, compact bool) error {
	ctx, stderr := cmd.Context(), cmd.ErrOrStderr()
	if h.Keyring == nil {
		return fmt.Errorf("encryption is off (set LANGGRAPH_AES_KEY): there is no key to re-encrypt under")
	}
	verb := "re-encrypting"
	if dryRun {
		verb = "counting"
	}
	needsReembed := h.NeedsReembed()
	// Every step leaves the file as it is: it is compacted once, below.
	var cur *progress
	rep, err := h.ReencryptSteps(ctx, reencrypt.Options{BatchSize: batch, DryRun: dryRun, DeferCompaction: true}, func(step string) func(done, total int64) {
		cur.Finish()
		if step == vault.StepReembed {
			cur = g.newProgress(stderr, step, "vectors", -1)
		} else {
			cur = g.newProgress(stderr, verb+" "+step, "rows", -1)
		}
		return cur.Set
	})
	cur.End(err)
	if err != nil {
		return err
	}
	sv, st, reembedded := rep.Saver, rep.Store, rep.Reembedded
	// A compaction that could not finish is reported after the counts,
	// and the command exits 1: the rows are resealed, their old images not
	// yet gone.
	var pending error
	if !dryRun && (compact || h.Backend == config.BackendSQLite) {
		if h.Backend == config.BackendPostgres {
			fmt.Fprintln(stderr, "memvault: compacting: VACUUM FULL locks each table (ACCESS EXCLUSIVE) while it is rewritten; its readers and writers wait")
		}
		p := g.newTicker(stderr, "compacting")
		done, err := h.DangerousCompact(ctx)
		p.End(err)
		switch {
		case err != nil && compact:
			pending = fmt.Errorf("%w: %w. Run `memvault keys reencrypt --compact` again once no other process reads the database; do not retire the old key before it succeeds", reencrypt.ErrCompactPending, err)
		case err != nil:
			pending = fmt.Errorf("%w: %w. Once the process reading the database has finished (or closed it), run `memvault keys reencrypt` again: it rewrites nothing and compacts. Do not retire the old key before it succeeds", reencrypt.ErrCompactPending, err)
		case compact:
			fmt.Fprintf(stderr, "memvault: compacted %s\n", strings.Join(done, ", "))
		}
	}
	if g.json {
		out := map[string]any{
			"dry_run":     dryRun,
			"checkpoints": map[string]int64{"scanned": sv.Scanned, "rewritten": sv.Rewritten},
			"store":       map[string]int64{"scanned": st.Scanned, "rewritten": st.Rewritten},
		}
		if needsReembed {
			// Only when the vectors were under another embedder: the run
			// re-embedded them (a dry run would).
			out["vectors"] = map[string]int64{"reembedded": reembedded}
		}
		if err := printJSON(cmd.OutOrStdout(), out); err != nil {
			return err
		}
		return pending
	}
	w := cmd.OutOrStdout()
	if dryRun {
		fmt.Fprintf(w, "would rewrite %d of %d checkpoint values/writes and %d of %d memories\n", sv.Rewritten, sv.Scanned, st.Rewritten, st.Scanned)
		if needsReembed {
			fmt.Fprintln(w, "would re-embed the store's vectors under the primary key")
		}
		return pending
	}
	fmt.Fprintf(w, "rewrote %d of %d checkpoint values/writes and %d of %d memories\n", sv.Rewritten, sv.Scanned, st.Rewritten, st.Scanned)
	if needsReembed {
		fmt.Fprintf(w, "re-embedded %d vectors under the primary key\n", reembedded)
	}
	return pending
}
