package main

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/memvault/memvault/config"
	"github.com/memvault/memvault/reencrypt"
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
			return withHandle(cmd.Context(), g, func(h *handle) error {
				// --compact compacts once, after the run, on either backend.
				opt := reencrypt.Options{BatchSize: batch, DryRun: dryRun, DeferCompaction: compact}
				var bar *progressbar.ProgressBar
				if !g.json && term.IsTerminal(int(os.Stderr.Fd())) {
					bar = progressbar.NewOptions64(-1, progressbar.OptionSetWriter(os.Stderr), progressbar.OptionSetDescription("re-encrypting"), progressbar.OptionShowCount(), progressbar.OptionClearOnFinish())
					opt.Progress = func(done, total int64) {
						bar.ChangeMax64(total)
						_ = bar.Set64(done)
					}
				}
				sv, st, err := h.Reencrypt(cmd.Context(), opt)
				if bar != nil {
					_ = bar.Finish()
				}
				// A compaction that could not finish is reported after the
				// counts, and the command exits 1: the rows are resealed,
				// their old images not yet gone.
				var pending error
				if errors.Is(err, reencrypt.ErrCompactPending) {
					pending = fmt.Errorf("%w. Once the process reading the database has finished (or closed it), run `memvault keys reencrypt` again: it rewrites nothing and compacts. Do not retire the old key before it succeeds", err)
					err = nil
				}
				if err != nil {
					return err
				}
				if compact && !dryRun {
					if h.Backend == config.BackendPostgres {
						fmt.Fprintln(os.Stderr, "memvault: compacting: VACUUM FULL locks each table (ACCESS EXCLUSIVE) while it is rewritten; its readers and writers wait")
					}
					done, err := h.DangerousCompact(cmd.Context())
					if err != nil {
						pending = fmt.Errorf("%w: %w. Run `memvault keys reencrypt --compact` again once no other process reads the database; do not retire the old key before it succeeds", reencrypt.ErrCompactPending, err)
					} else {
						fmt.Fprintf(os.Stderr, "memvault: compacted %s\n", strings.Join(done, ", "))
					}
				}
				if g.json {
					if err := printJSON(cmd.OutOrStdout(), map[string]any{
						"dry_run":     dryRun,
						"checkpoints": map[string]int64{"scanned": sv.Scanned, "rewritten": sv.Rewritten},
						"store":       map[string]int64{"scanned": st.Scanned, "rewritten": st.Rewritten},
					}); err != nil {
						return err
					}
					return pending
				}
				verb := "rewrote"
				if dryRun {
					verb = "would rewrite"
				}
				fmt.Fprintf(cmd.OutOrStdout(), "%s %d of %d checkpoint values/writes and %d of %d memories\n", verb, sv.Rewritten, sv.Scanned, st.Rewritten, st.Scanned)
				return pending
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
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return withHandle(cmd.Context(), g, func(h *handle) error {
				if err := h.RotateSubject(cmd.Context(), args[0]); err != nil {
					return err
				}
				fmt.Fprintf(cmd.OutOrStdout(), "%s has a new data key; run keys reencrypt to move its values to it\n", args[0])
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
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return withHandle(cmd.Context(), g, func(h *handle) error {
				if err := h.Readmit(cmd.Context(), args[0]); err != nil {
					return err
				}
				fmt.Fprintf(cmd.OutOrStdout(), "%s may have data keys again\n", args[0])
				return nil
			})
		},
	}

	cmd.AddCommand(gen, check, reenc, rotateKEK, rotateSubject, readmit, newCensusCmd(g))
	return cmd
}
