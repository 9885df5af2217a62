package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/checkpointer/threadfile"
	"github.com/memvault/memvault/jsonvalue"
)

func newThreadsCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{Use: "threads", Short: "Inspect, fork, delete, export and import checkpoint threads"}
	var lf listFlags
	history := &cobra.Command{
		Use:   "history THREAD",
		Short: "Print a thread's checkpoints, newest first, in LangGraph's tuple shape",
		Args:  threadArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			// Flags first: a usage error is one whether the database exists
			// or not.
			if _, _, err := lf.options(args[0]); err != nil {
				return err
			}
			return withHandle(cmd.Context(), g, func(h *handle) error {
				return threadHistory(cmd.Context(), cmd.OutOrStdout(), h, g.json, args[0], lf)
			})
		},
	}
	lf.register(history)

	var showID, showNS string
	show := &cobra.Command{
		Use:   "show THREAD",
		Short: "Print one checkpoint (the latest unless --checkpoint) with decrypted values",
		Args:  threadArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			return withHandle(cmd.Context(), g, func(h *handle) error {
				t, err := h.Saver.GetTuple(cmd.Context(), checkpointer.Config{ThreadID: args[0], CheckpointNS: showNS, CheckpointID: showID})
				if err != nil {
					return err
				}
				if t == nil {
					return showNotFound(cmd.Context(), h, args[0], showNS, showID)
				}
				return printJSON(cmd.OutOrStdout(), tupleJSON(t))
			})
		},
	}
	show.Flags().StringVar(&showID, "checkpoint", "", "checkpoint id (default: latest)")
	show.Flags().StringVar(&showNS, "ns", "", "checkpoint namespace (default: root)")

	var listLimit int
	list := &cobra.Command{
		Use:   "list",
		Short: "List threads with their checkpoint counts and latest checkpoint",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if listLimit < 0 {
				return usagef("--limit must be >= 0")
			}
			return withHandle(cmd.Context(), g, func(h *handle) error {
				return listThreads(cmd.Context(), cmd.OutOrStdout(), h, g.json, listLimit)
			})
		},
	}
	list.Flags().IntVar(&listLimit, "limit", 0, "at most this many threads (0: all)")

	var forkID, forkNS string
	var sets []string
	fork := &cobra.Command{
		Use:   "fork THREAD --checkpoint ID [--set channel=json ...]",
		Short: "Branch a thread from an earlier checkpoint, optionally changing channel values (time travel)",
		Args:  threadArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			if forkID == "" {
				return usagef("fork needs --checkpoint ID")
			}
			updates, err := parseSets(sets)
			if err != nil {
				return err
			}
			return withHandle(cmd.Context(), g, func(h *handle) error {
				cfg, err := threadfile.Fork(cmd.Context(), h.Saver, checkpointer.Config{ThreadID: args[0], CheckpointNS: forkNS, CheckpointID: forkID}, updates)
				if err != nil {
					return err
				}
				if g.json {
					return printJSON(cmd.OutOrStdout(), configJSON(cfg))
				}
				fmt.Fprintf(cmd.OutOrStdout(), "forked %s from %s: new checkpoint %s\n", printable(cfg.ThreadID), checkpointName(forkID), printable(cfg.CheckpointID))
				return nil
			})
		},
	}
	fork.Flags().StringVar(&forkID, "checkpoint", "", "checkpoint to branch from (required)")
	fork.Flags().StringVar(&forkNS, "ns", "", "checkpoint namespace (default: root)")
	fork.Flags().StringArrayVar(&sets, "set", nil, "channel=JSON value to set in the new checkpoint (repeatable)")

	del := &cobra.Command{
		Use:   "delete THREAD...",
		Short: "Delete threads with every checkpoint, value and write",
		Long: `delete removes each named thread with every checkpoint, value and pending
write. A thread that has no checkpoint is not deleted but reported as not
found (exit 1), after the others are deleted; with --json the object lists
both: {"deleted":[...],"not_found":[...]}.`,
		Args: threadArgs(cobra.MinimumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			return withHandle(cmd.Context(), g, func(h *handle) error {
				deleted, missing := []string{}, []string{}
				seen := map[string]bool{}
				for _, id := range args {
					if seen[id] {
						continue
					}
					seen[id] = true
					ok, err := threadExists(cmd.Context(), h, id)
					if err != nil {
						return err
					}
					if !ok {
						missing = append(missing, id)
						continue
					}
					if err := h.Saver.DeleteThread(cmd.Context(), id); err != nil {
						return err
					}
					deleted = append(deleted, id)
					if !g.json {
						fmt.Fprintf(cmd.OutOrStdout(), "deleted %s\n", idName("thread", id))
					}
				}
				if g.json {
					if err := printJSON(cmd.OutOrStdout(), map[string]any{"deleted": deleted, "not_found": missing}); err != nil {
						return err
					}
				}
				if len(missing) > 0 {
					named := make([]string, len(missing))
					for i, id := range missing {
						named[i] = checkpointer.NameID("thread", id)
					}
					return notFoundf("no %s (nothing deleted for it)", strings.Join(named, ", "))
				}
				return nil
			})
		},
	}

	var delCkptID, delCkptNS string
	delCkpt := &cobra.Command{
		Use:   "delete-checkpoint THREAD --checkpoint ID [--ns NS]",
		Short: "Delete one checkpoint with its writes and the values nothing else uses",
		Args:  threadArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			if delCkptID == "" {
				return usagef("delete-checkpoint needs --checkpoint ID")
			}
			return withHandle(cmd.Context(), g, func(h *handle) error {
				d, ok := h.Saver.(checkpointer.CheckpointDeleter)
				if !ok {
					return fmt.Errorf("this saver (%T) cannot delete a checkpoint", h.Saver)
				}
				cfg := checkpointer.Config{ThreadID: args[0], CheckpointNS: delCkptNS, CheckpointID: delCkptID}
				if err := d.DeleteCheckpoint(cmd.Context(), cfg); err != nil {
					return err
				}
				if g.json {
					return printJSON(cmd.OutOrStdout(), map[string]any{"thread_id": args[0], "checkpoint_ns": delCkptNS, "deleted": delCkptID})
				}
				fmt.Fprintf(cmd.OutOrStdout(), "deleted %s of %s\n", checkpointName(delCkptID), idName("thread", args[0]))
				return nil
			})
		},
	}
	delCkpt.Flags().StringVar(&delCkptID, "checkpoint", "", "checkpoint to delete (required)")
	delCkpt.Flags().StringVar(&delCkptNS, "ns", "", "checkpoint namespace (default: root)")

	export := &cobra.Command{
		Use:   "export THREAD... > file.jsonl",
		Short: "Write threads (every checkpoint, namespace and pending write) as JSON lines, values decrypted",
		Args:  threadArgs(cobra.MinimumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			return withHandle(cmd.Context(), g, func(h *handle) error {
				w := bufio.NewWriter(cmd.OutOrStdout())
				// A thread named twice is written once: import refuses a
				// checkpoint that is on two lines.
				var ids []string
				seen := map[string]bool{}
				for _, id := range args {
					if !seen[id] {
						seen[id] = true
						ids = append(ids, id)
					}
				}
				p := g.newProgress(cmd.ErrOrStderr(), "exporting threads", "threads", int64(len(ids)))
				for i, id := range ids {
					if _, err := threadfile.Export(cmd.Context(), w, h.Saver, id); err != nil {
						p.Fail()
						return err
					}
					p.Set(int64(i+1), int64(len(ids)))
				}
				p.Finish()
				return w.Flush()
			})
		},
	}

	cmd.AddCommand(list, history, show, fork, del, delCkpt, export, newImportCmd(g), newSweepCmd(g))
	return cmd
}

// checkpointName names checkpoint id in a message: "(latest)" for none,
// else as idName does (by its length beyond the limit).
func checkpointName(id string) string {
	if id == "" {
		return "checkpoint (latest)"
	}
	return idName("checkpoint", id)
}

// listFlags are the List options of history.
type listFlags struct {
	ns     string
	nsSet  bool
	limit  int
	before string
	filter string
}

func (lf *listFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringVar(&lf.ns, "ns", "", "only this checkpoint namespace (default: all namespaces)")
	cmd.Flags().IntVar(&lf.limit, "limit", 0, "at most this many checkpoints (0: all)")
	cmd.Flags().StringVar(&lf.before, "before", "", "only checkpoints older than this checkpoint id")
	cmd.Flags().StringVar(&lf.filter, "filter", "", `metadata filter as JSON, e.g. '{"source":"loop"}' (containment)`)
	cmd.PreRun = func(cmd *cobra.Command, _ []string) { lf.nsSet = cmd.Flags().Changed("ns") }
}

func (lf *listFlags) options(thread string) (checkpointer.Config, checkpointer.ListOptions, error) {
	cfg := checkpointer.Config{ThreadID: thread, CheckpointNS: lf.ns}
	opt := checkpointer.ListOptions{Limit: lf.limit, AllNamespaces: !lf.nsSet}
	if lf.limit < 0 {
		return cfg, opt, usagef("--limit must be >= 0")
	}
	if lf.before != "" {
		opt.Before = &checkpointer.Config{ThreadID: thread, CheckpointNS: lf.ns, CheckpointID: lf.before}
	}
	if lf.filter != "" {
		v, err := jsonvalue.Unmarshal([]byte(lf.filter))
		m, ok := v.(map[string]any)
		if err != nil || !ok {
			return cfg, opt, usagef("--filter must be a JSON object")
		}
		opt.Filter = m
	}
	return cfg, opt, nil
}

func threadHistory(ctx context.Context, out io.Writer, h *handle, asJSON bool, thread string, lf listFlags) error {
	cfg, opt, err := lf.options(thread)
	if err != nil {
		return err
	}
	n := 0
	enc := json.NewEncoder(out)
	for t, err := range h.Saver.List(ctx, &cfg, opt) {
		if err != nil {
			return err
		}
		n++
		if asJSON {
			if err := enc.Encode(tupleJSON(t)); err != nil {
				return err
			}
			continue
		}
		b, err := json.MarshalIndent(tupleJSON(t), "", "  ")
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "%s\n", b)
	}
	if n == 0 {
		return notFoundf("%s has no checkpoints matching", checkpointer.NameID("thread", thread))
	}
	return nil
}

func listThreads(ctx context.Context, out io.Writer, h *handle, asJSON bool, limit int) error {
	type info struct {
		ThreadID    string `json:"thread_id"`
		Checkpoints int    `json:"checkpoints"`
		Latest      string `json:"latest_checkpoint_id"`
		Updated     string `json:"updated_at"`
	}
	byID := map[string]*info{}
	var order []string
	updated := func(id string) string {
		if ts, ok := checkpointer.IDTime(id); ok {
			return ts.UTC().Format(time.RFC3339)
		}
		return ""
	}
	if lister, ok := h.Saver.(checkpointer.ThreadLister); ok {
		// One aggregate query; nothing is decrypted.
		for ti, err := range lister.ListThreads(ctx) {
			if err != nil {
				return err
			}
			byID[ti.ThreadID] = &info{ThreadID: ti.ThreadID, Checkpoints: ti.Checkpoints, Latest: ti.LatestCheckpointID, Updated: updated(ti.LatestCheckpointID)}
			order = append(order, ti.ThreadID)
		}
	} else {
		for t, err := range h.Saver.List(ctx, nil, checkpointer.ListOptions{AllNamespaces: true}) {
			if err != nil {
				return err
			}
			i := byID[t.Config.ThreadID]
			if i == nil {
				i = &info{ThreadID: t.Config.ThreadID}
				byID[t.Config.ThreadID] = i
				order = append(order, t.Config.ThreadID)
			}
			i.Checkpoints++
			if t.Config.CheckpointID > i.Latest {
				i.Latest = t.Config.CheckpointID
				i.Updated = updated(i.Latest)
			}
		}
	}
	slices.SortFunc(order, func(a, b string) int { return strings.Compare(byID[b].Latest, byID[a].Latest) })
	if limit > 0 && len(order) > limit {
		order = order[:limit]
	}
	if asJSON {
		enc := json.NewEncoder(out)
		for _, id := range order {
			if err := enc.Encode(byID[id]); err != nil {
				return err
			}
		}
		return nil
	}
	if len(order) == 0 {
		fmt.Fprintln(out, "no threads")
		return nil
	}
	fmt.Fprintf(out, "%-36s %11s  %-36s  %s\n", "THREAD", "CHECKPOINTS", "LATEST", "UPDATED")
	for _, id := range order {
		i := byID[id]
		fmt.Fprintf(out, "%-36s %11d  %-36s  %s\n", idCell("thread", i.ThreadID), i.Checkpoints, idCell("checkpoint", i.Latest), i.Updated)
	}
	return nil
}

// idCell is an id in a table: as printable shows it or, longer than
// checkpointer.MaxIDBytes (a thread an earlier version stored), named by
// its length as every other output names it (idName): a 64 KiB thread id
// was one 64 KiB line of `threads list`. --json keeps ids exact.
func idCell(what, id string) string {
	if len(id) > checkpointer.MaxIDBytes {
		return checkpointer.NameID(what, id)
	}
	return printable(id)
}

func parseSets(sets []string) (map[string]any, error) {
	out := map[string]any{}
	for _, s := range sets {
		k, v, ok := strings.Cut(s, "=")
		if !ok || k == "" {
			return nil, usagef("--set %q: want channel=JSON", s)
		}
		val, err := jsonvalue.Unmarshal([]byte(v))
		if err != nil {
			return nil, usagef("--set %s: value is not JSON: %v", k, err)
		}
		out[k] = val
	}
	return out, nil
}

// threadArgs checks the argument count with count, then that every argument
// is a usable thread id: an empty one (an unset shell variable, say) is a
// usage error, never "every thread".
func threadArgs(count cobra.PositionalArgs) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if err := count(cmd, args); err != nil {
			return err
		}
		for _, id := range args {
			if err := checkpointer.ValidateThreadID(id); err != nil {
				return usageError{fmt.Errorf("%s: %w", checkpointer.NameID("thread id", id), err)}
			}
		}
		return nil
	}
}

// showNotFound is the error of `threads show` when the checkpoint asked
// for is not there. A thread whose checkpoints are all in other
// namespaces (Eino's are under "eino", a subgraph's under its task path)
// looks empty from the root namespace: the error names the namespaces it
// has and the --ns to give.
//
// A checkpoint asked for by id is looked for in the other namespaces: the
// hint is the --ns of the one that has it, or, when none has it, how to
// list the thread's checkpoints (naming namespaces where the id is not
// either sent the user on a search that could not succeed).
func showNotFound(ctx context.Context, h *handle, thread, ns, id string) error {
	var others, holding []string
	exists := false
	for t, err := range h.Saver.List(ctx, &checkpointer.Config{ThreadID: thread}, checkpointer.ListOptions{AllNamespaces: true}) {
		if err != nil {
			return err
		}
		exists = true
		n := t.Config.CheckpointNS
		if n != ns && !slices.Contains(others, n) {
			others = append(others, n)
		}
		if id != "" && t.Config.CheckpointID == id && n != ns && !slices.Contains(holding, n) {
			holding = append(holding, n)
		}
	}
	where := checkpointer.NameID("namespace", ns)
	if ns == "" {
		where = "the root namespace"
	}
	if !exists {
		return notFoundf("no %s (`memvault threads list` lists the threads)", checkpointer.NameID("thread", thread))
	}
	if id != "" {
		if len(holding) == 0 {
			if len(thread) > checkpointer.MaxIDBytes {
				return notFoundf("%s has no %s in any namespace (`memvault threads history` lists its checkpoints)", checkpointer.NameID("thread", thread), checkpointName(id))
			}
			return notFoundf("%s has no %s in any namespace (`memvault threads history %s` lists its checkpoints)", checkpointer.NameID("thread", thread), checkpointName(id), shellQuote(thread))
		}
		others = holding
	}
	if len(others) == 0 {
		return notFoundf("%s has no %s in %s", checkpointer.NameID("thread", thread), checkpointName(id), where)
	}
	slices.Sort(others)
	hints := make([]string, len(others))
	for i, n := range others {
		hints[i] = "--ns " + shellQuote(n)
	}
	if id != "" {
		return notFoundf("%s has no %s in %s, but has it in another namespace: %s", checkpointer.NameID("thread", thread), checkpointName(id), where, strings.Join(hints, ", "))
	}
	return notFoundf("%s has no %s in %s, but has checkpoints in other namespaces: %s", checkpointer.NameID("thread", thread), checkpointName(id), where, strings.Join(hints, ", "))
}

// shellQuote returns s as a shell word: as is when it holds only
// characters no shell treats specially, else in single quotes. A subgraph
// namespace ("parent:task-id|child") holds a '|'.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.:/@+=,") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// threadExists reports whether thread has a checkpoint in any namespace.
func threadExists(ctx context.Context, h *handle, thread string) (bool, error) {
	for _, err := range h.Saver.List(ctx, &checkpointer.Config{ThreadID: thread}, checkpointer.ListOptions{AllNamespaces: true, Limit: 1}) {
		if err != nil {
			return false, err
		}
		return true, nil
	}
	return false, nil
}
