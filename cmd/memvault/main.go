package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"os/user"
	"regexp"
	"slices"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/memvault/memvault/audit"
	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/config"
	"github.com/memvault/memvault/store"
	"github.com/memvault/memvault/vault"
)

// globals are the flags every command takes.
type globals struct {
	dsn, db, schema string
	dbSet           bool
	json            bool
	quiet           bool
	lookup          func(string) (string, bool)
}

// config reads the environment and applies the flags on top.
func (g *globals) config() (config.Config, error) {
	if g.dsn != "" && g.dbSet {
		// Two databases: the server would be used and --db ignored.
		return config.Config{}, usagef("--db and --dsn both name a database: give --db for a SQLite file or --dsn for a server, not both")
	}
	lookup := g.lookup
	if g.dsn != "" || g.dbSet {
		// The flag names the database: the environment's database
		// variables, which it overrides, cannot conflict with it.
		lookup = func(k string) (string, bool) {
			if k == "MEMVAULT_DB" || k == "MEMVAULT_DSN" || k == "DATABASE_URL" {
				return "", false
			}
			return g.lookup(k)
		}
	}
	c, err := config.FromLookup(lookup)
	if err != nil {
		return c, err
	}
	if g.dsn != "" {
		c.DSN = g.dsn
	}
	if g.dbSet {
		c.DSN = g.dsn
		c.DBPath = g.db
	}
	if g.schema != "" {
		c.Schema = g.schema
	}
	return c, c.Validate()
}

// usageError marks errors that should exit with status 2.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

func usagef(format string, args ...any) error { return usageError{fmt.Errorf(format, args...)} }

// subjectArg takes one data subject, not empty (a usage error: exit 2).
func subjectArg(cmd *cobra.Command, args []string) error {
	if err := cobra.ExactArgs(1)(cmd, args); err != nil {
		return err
	}
	if args[0] == "" {
		return usagef("empty subject: name the data subject (the part of a thread id before the separator, or the namespace label)")
	}
	return nil
}

// invalidInput are the errors of arguments the library refuses (a
// namespace, key, filter, field path or thread id given on the command
// line): usage errors, exit 2, whichever command they came through.
var invalidInput = []error{store.ErrInvalidNamespace, store.ErrInvalidKey, store.ErrInvalidFilter,
	store.ErrInvalidArgument, store.ErrInvalidPath, checkpointer.ErrInvalidID}

func newRootCmd(g *globals) *cobra.Command {
	root := &cobra.Command{
		Use:           "memvault",
		Short:         "Durable, encrypted state for AI agents (LangGraph-compatible checkpoints and memory)",
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       version(),
		PersistentPreRun: func(cmd *cobra.Command, _ []string) {
			g.dbSet = cmd.Flags().Changed("db")
			// Who acts, for the audit trail: MEMVAULT_PRINCIPAL, else the
			// operating-system user running the CLI.
			principal, _ := g.lookup("MEMVAULT_PRINCIPAL")
			if principal == "" {
				principal = "cli"
				if u, err := user.Current(); err == nil {
					principal = "cli:" + u.Username
				}
			}
			cmd.SetContext(audit.WithPrincipal(cmd.Context(), principal))
		},
	}
	root.SetVersionTemplate(`{{memvaultVersion .}}`)
	pf := root.PersistentFlags()
	pf.StringVar(&g.dsn, "dsn", "", "database server: postgres://…, mongodb://… or redis://… (rediss://, redis+cluster://) (default $MEMVAULT_DSN or $DATABASE_URL)")
	pf.StringVar(&g.db, "db", "", "SQLite database file (default $MEMVAULT_DB or "+config.DefaultDBPath+")")
	pf.StringVar(&g.schema, "schema", "", "PostgreSQL schema, MongoDB database or Redis key prefix (default $MEMVAULT_SCHEMA; else the search_path, the URI's database or checkpointing_db, memvault:cp)")
	pf.BoolVar(&g.json, "json", false, "print JSON for scripts on stdout: JSON lines (one compact object per line) for commands that list (threads list/history/export, store search/list/namespaces, audit show, keys census, bench), one JSON object for the others")
	pf.BoolVarP(&g.quiet, "quiet", "q", false, "print no progress on stderr (long commands print a bar on a terminal, a line every few seconds elsewhere)")
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	root.AddCommand(
		newDemoCmd(g),
		newThreadsCmd(g),
		newStoreCmd(g),
		newKeysCmd(g),
		newForgetCmd(g),
		newAuditCmd(g),
		newMigrateCmd(g),
		newSerdeCmd(g),
		newBenchCmd(g),
		newInspectCmd(g),
	)
	groupArgs(root)
	return root
}

// groupArgs makes an argument of every command group (a command that only
// holds subcommands: threads, store, keys…) a usage error naming the
// subcommands it is close to. Cobra prints such a group's help and exits 0
// for `memvault threads lst`, which a script takes for success; the root
// already refuses an unknown command.
func groupArgs(cmd *cobra.Command) {
	for _, c := range cmd.Commands() {
		if c.HasSubCommands() && !c.Runnable() && c.Args == nil {
			c.Args = unknownSubcommand
			// Cobra calls Args only for a command it runs: one that
			// printed its help instead would never see the argument.
			c.RunE = func(c *cobra.Command, _ []string) error { return c.Help() }
		}
		groupArgs(c)
	}
}

// unknownSubcommand refuses any argument of a command group.
func unknownSubcommand(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	msg := fmt.Sprintf("unknown command %q for %q", args[0], cmd.CommandPath())
	if cmd.SuggestionsMinimumDistance <= 0 {
		cmd.SuggestionsMinimumDistance = 2 // cobra's default, set only on the root
	}
	if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
		msg += "; did you mean " + strings.Join(s, " or ") + "?"
	}
	return usagef("%s (memvault %s --help lists its commands)", msg, cmd.Name())
}

// run executes the CLI and returns the process exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer, lookup func(string) (string, bool)) int {
	silenceRedis()
	g := &globals{lookup: lookup}
	root := newRootCmd(g)
	root.SetArgs(args)
	out := &checkedWriter{w: stdout}
	root.SetOut(out)
	root.SetErr(stderr)
	err := root.ExecuteContext(ctx)
	if err == nil && out.err != nil {
		// A listing written to a full disk is not a listing: a script
		// saving it must not believe it has it.
		err = fmt.Errorf("write the output: %w", out.err)
	}
	if err == nil {
		return 0
	}
	// Every command's error, not only vault.Open's (the bench connects
	// with --dsn itself): no DSN secret is printed.
	dsns := []string{g.dsn}
	for _, k := range []string{"MEMVAULT_DSN", "DATABASE_URL", "MEMVAULT_KEY_DSN"} {
		if v, ok := lookup(k); ok {
			dsns = append(dsns, v)
		}
	}
	err = vault.ScrubSecrets(err, dsns...)
	msg := errorText(g.nameSources(err.Error()))
	fmt.Fprintln(stderr, "memvault: "+msg)
	var ue usageError
	if errors.As(err, &ue) || isCobraUsage(err) || slices.ContainsFunc(invalidInput, func(e error) bool { return errors.Is(err, e) }) {
		return 2
	}
	if isPending(err) {
		return exitPending
	}
	return 1
}

// checkedWriter is the commands' standard output: it keeps the first
// write error, which most commands' prints (fmt.Fprintf) drop, for run to
// report, and writes nothing after it.
type checkedWriter struct {
	w   io.Writer
	err error
}

func (c *checkedWriter) Write(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	n, err := c.w.Write(p)
	if err != nil {
		c.err = err
	}
	return n, err
}

// settingName matches a setting's environment variable in a message, not
// as part of a longer name ("MEMVAULT_DSN/DATABASE_URL" names both and is
// left alone).
var settingName = regexp.MustCompile(`\b(MEMVAULT_DSN|MEMVAULT_DB|MEMVAULT_SCHEMA)\b(/DATABASE_URL)?`)

// nameSources rewrites the names of the database settings in msg to where
// the user gave them: the library names the environment variable
// (vault: MEMVAULT_DSN: cannot parse…, "typo.db" (MEMVAULT_DB) does not
// exist), which is the wrong thing to look for after `--dsn`, `--db` or
// `--schema`, or when the DSN came from DATABASE_URL.
func (g *globals) nameSources(msg string) string {
	set := func(k string) bool {
		v, ok := g.lookup(k)
		return ok && strings.TrimSpace(v) != ""
	}
	names := map[string]string{}
	switch {
	case g.dsn != "":
		names["MEMVAULT_DSN"] = "--dsn"
	case !set("MEMVAULT_DSN") && set("DATABASE_URL"):
		names["MEMVAULT_DSN"] = "DATABASE_URL"
	}
	if g.dbSet {
		names["MEMVAULT_DB"] = "--db"
	}
	if g.schema != "" {
		names["MEMVAULT_SCHEMA"] = "--schema"
	}
	return settingName.ReplaceAllStringFunc(msg, func(m string) string {
		if n, ok := names[m]; ok {
			return n
		}
		return m
	})
}

// isCobraUsage recognises the argument errors cobra produces itself.
func isCobraUsage(err error) bool {
	s := err.Error()
	for _, p := range []string{"unknown command", "unknown flag", "unknown shorthand flag", "accepts ", "requires at least", "requires at most", "flag needs an argument", "invalid argument"} {
		if strings.Contains(s, p) {
			return true
		}
	}
	return false
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	for _, w := range envWarnings(os.Environ()) {
		fmt.Fprintln(os.Stderr, "memvault: warning:", w)
	}
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr, os.LookupEnv)
	stop()
	os.Exit(code)
}
