package main

import (
	"context"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/config"
	"github.com/memvault/memvault/reencrypt"
	"github.com/memvault/memvault/store"
	"github.com/memvault/memvault/vault"
)

func newDemoCmd(g *globals) *cobra.Command {
	var keep bool
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Play a support-agent session on the embedded default (SQLite, offline embedder, encryption on)",
		Long: `demo plays a short support-agent conversation against a SQLite file: checkpoints
with pending writes, an interrupt and its resume, a crash and resume, history and a
fork (time travel), memories recalled semantically from a second thread, a key
rotation with re-encryption, and a look at the raw database.

Without --db it works in a temporary directory that is removed afterwards (unless
--keep); --db names a new file to create and keep (an existing file is refused).
Without LANGGRAPH_AES_KEY it generates a demo key; for a database that is kept it
prints the key to export to read it afterwards. The transcript is for people:
there is no --json output.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runDemo(cmd.Context(), cmd.OutOrStdout(), g, keep)
		},
	}
	cmd.Flags().BoolVar(&keep, "keep", false, "keep the temporary database and print its path")
	return cmd
}

type demo struct {
	kept bool // the database outlives the demo (--db, --keep)
	out  io.Writer
	h    *vault.Handle
	cfg  config.Config
	path string
	n    int
}

func (d *demo) section(title string) {
	d.n++
	fmt.Fprintf(d.out, "\n── %d. %s %s\n", d.n, title, strings.Repeat("─", max(0, 60-len(title))))
}

func (d *demo) say(format string, args ...any) { fmt.Fprintf(d.out, "   "+format+"\n", args...) }

func runDemo(ctx context.Context, out io.Writer, g *globals, keep bool) (err error) {
	start := time.Now()
	cfg, err := g.config()
	if err != nil {
		return err
	}
	if g.dsn != "" {
		return usagef("demo runs on the embedded SQLite file only: use --db FILE, not --dsn")
	}
	if g.json {
		return usagef("demo prints a transcript for people; it has no --json output")
	}
	if g.dbSet {
		// The demo writes its own threads and memories and rotates the
		// key: into a file of its own, never over someone's data (whose
		// keys and embedder it would not have anyway).
		if _, err := os.Lstat(g.db); err == nil {
			return usagef("demo needs a new file: %s exists (give --db a path that does not exist, or no --db for a temporary one)", printable(g.db))
		} else if !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("--db: %w", err)
		}
	}
	// The demo is about the embedded default; a DSN in the environment must
	// not make it write into a shared database unasked (cfg.DSN is cleared
	// below).
	path := g.db
	if !g.dbSet {
		dir, err := os.MkdirTemp("", "memvault-demo-")
		if err != nil {
			return err
		}
		if !keep {
			defer os.RemoveAll(dir)
		}
		path = filepath.Join(dir, "memvault.db")
	}
	cfg.DBPath = path
	cfg.DSN = ""
	// A user who exported their own database's settings is told the demo
	// leaves them alone, and where it runs instead (never the values: a
	// DSN may hold a password).
	for _, k := range []string{"MEMVAULT_DB", "MEMVAULT_DSN", "DATABASE_URL"} {
		if v, ok := g.lookup(k); !ok || strings.TrimSpace(v) == "" || k == "MEMVAULT_DB" && g.dbSet {
			continue
		}
		if g.dbSet {
			fmt.Fprintf(out, "note: %s is set; the demo does not use it: it runs on SQLite only, in %s\n", k, path)
		} else {
			fmt.Fprintf(out, "note: %s is set; the demo does not use it: it runs on its own temporary SQLite database, %s (--db FILE names a new file to keep)\n", k, path)
		}
	}
	if cfg.Keys.Primary == "" && cfg.Encryption != config.EncryptionOff {
		k, err := config.GenerateKey()
		if err != nil {
			return err
		}
		cfg.Keys.Primary = k
		cfg.Encryption = config.EncryptionEnvelope
		if keep || g.dbSet {
			fmt.Fprintf(out, "LANGGRAPH_AES_KEY is not set: using a fresh demo key (the key rotation below replaces it; the key to read the kept database is printed there)\n")
		} else {
			fmt.Fprintln(out, "LANGGRAPH_AES_KEY is not set: using a fresh demo key for this temporary database")
		}
	}
	if cfg.EffectiveEncryption() == config.EncryptionOff {
		fmt.Fprintln(out, "note: MEMVAULT_ENCRYPTION=off — values will be stored in plaintext")
	}
	d := &demo{out: out, cfg: cfg, path: path, kept: keep || g.dbSet}
	if err := d.open(ctx); err != nil {
		return err
	}
	defer func() {
		if d.h != nil {
			err = errors.Join(err, d.h.Close())
		}
	}()
	fmt.Fprintf(out, "memvault demo — database %s (%s), embeddings %s, encryption %s\n", path, d.h.Backend, d.h.Embedder.Name(), cfg.EffectiveEncryption())

	for _, run := range []func(context.Context) error{d.conversation, d.memories, d.rotation, d.rawLook} {
		if err := run(ctx); err != nil {
			return err
		}
	}
	fmt.Fprintf(out, "\ndone in %s.", time.Since(start).Round(time.Millisecond))
	if keep && !g.dbSet {
		fmt.Fprintf(out, " Database kept at %s", path)
	}
	fmt.Fprintln(out)
	return nil
}

func (d *demo) open(ctx context.Context) error {
	h, err := vault.Open(ctx, d.cfg)
	if err != nil {
		return err
	}
	d.h = h
	return nil
}

// thread is the support conversation's thread.
const demoThread = "support-7f3a"

func (d *demo) conversation(ctx context.Context) error {
	g := &miniGraph{saver: d.h.Saver, runID: "run-1"}
	cfg := checkpointer.Config{ThreadID: demoThread}

	d.section("A customer writes in (thread " + demoThread + ")")
	msg := func(role, text string) map[string]any { return map[string]any{"role": role, "content": text} }
	cfg, _, err := g.step(ctx, cfg, "input", "", []checkpointer.Write{
		{Channel: "messages", Value: msg("user", "Hi, I was charged twice for invoice INV-1042. Can you refund one?")},
		{Channel: "user_id", Value: "alice"},
	})
	if err != nil {
		return err
	}
	d.say("user:  Hi, I was charged twice for invoice INV-1042. Can you refund one?")
	d.say("checkpoint %s (step -1, input)", short(cfg.CheckpointID))

	// Step 0: the agent node runs as a task; its writes are recorded as
	// pending writes before the step's checkpoint is stored.
	writes := []checkpointer.Write{
		{Channel: "messages", Value: msg("assistant", "Sorry about that! Let me look up INV-1042.")},
		{Channel: "intent", Value: "billing_dispute"},
	}
	if err := d.h.Saver.PutWrites(ctx, cfg, writes, "task-agent-0", "~agent"); err != nil {
		return err
	}
	cfg, _, err = g.step(ctx, cfg, "loop", "agent", writes)
	if err != nil {
		return err
	}
	d.say("agent: Sorry about that! Let me look up INV-1042.   [intent=billing_dispute]")
	d.say("checkpoint %s (step 0) — task writes were saved as pending writes first", short(cfg.CheckpointID))

	writes = []checkpointer.Write{{Channel: "invoice", Value: map[string]any{
		"id": "INV-1042", "amount_cents": int64(4900), "currency": "USD", "charges": []any{"ch_1", "ch_2"},
	}}}
	cfg, _, err = g.step(ctx, cfg, "loop", "lookup_invoice", writes)
	if err != nil {
		return err
	}
	lookupCfg := cfg
	d.say("tool:  lookup_invoice → 2 charges of $49.00 found")
	d.say("checkpoint %s (step 1)", short(cfg.CheckpointID))

	d.section("A refund needs a human: interrupt, then resume")
	interrupt := []checkpointer.Write{{Channel: checkpointer.ChannelInterrupt, Value: map[string]any{
		"value": "Approve a refund of $49.00 to alice?", "resumable": true,
	}}}
	if err := d.h.Saver.PutWrites(ctx, cfg, interrupt, "task-refund-2", "~refund"); err != nil {
		return err
	}
	tup, err := d.h.Saver.GetTuple(ctx, checkpointer.Config{ThreadID: demoThread})
	if err != nil {
		return err
	}
	for _, w := range tup.PendingWrites {
		if w.Channel == checkpointer.ChannelInterrupt {
			d.say("⏸  graph paused at %s: %v", short(tup.Config.CheckpointID), w.Value.(map[string]any)["value"])
		}
	}
	if err := d.h.Saver.PutWrites(ctx, cfg, []checkpointer.Write{{Channel: checkpointer.ChannelResume, Value: "approved by supervisor bob"}}, "task-refund-2", "~refund"); err != nil {
		return err
	}
	d.say("▶  resumed with: approved by supervisor bob")
	writes = []checkpointer.Write{
		{Channel: "refund", Value: map[string]any{"charge": "ch_2", "status": "issued", "approved_by": "bob"}},
		{Channel: "messages", Value: msg("assistant", "Done — the duplicate $49.00 charge has been refunded.")},
	}
	cfg, _, err = g.step(ctx, cfg, "loop", "refund", writes)
	if err != nil {
		return err
	}
	d.say("agent: Done — the duplicate $49.00 charge has been refunded.")
	d.say("checkpoint %s (step 2)", short(cfg.CheckpointID))

	d.section("The process crashes mid-step; a new one resumes")
	// Two tasks run in step 3. "audit" finishes and its write is saved;
	// the process dies before "notify" finishes.
	audit := []checkpointer.Write{{Channel: "audit", Value: map[string]any{"event": "refund", "invoice": "INV-1042", "at": time.Date(2026, 11, 21, 9, 30, 0, 0, time.UTC)}}}
	if err := d.h.Saver.PutWrites(ctx, cfg, audit, "task-audit-3", "~audit"); err != nil {
		return err
	}
	d.say("task audit finished (write saved); task notify was running… 💥 crash")
	if err := d.h.Close(); err != nil {
		return err
	}
	d.h = nil
	if err := d.open(ctx); err != nil {
		return err
	}
	g.saver = d.h.Saver
	tup, err = d.h.Saver.GetTuple(ctx, checkpointer.Config{ThreadID: demoThread})
	if err != nil {
		return err
	}
	done := map[string]bool{}
	for _, w := range tup.PendingWrites {
		done[w.TaskID] = true
	}
	d.say("reopened %s: latest checkpoint %s (step %v), %d pending writes", filepath.Base(d.path), short(tup.Config.CheckpointID), tup.Metadata["step"], len(tup.PendingWrites))
	if done["task-audit-3"] {
		d.say("task audit already has its write → not re-run; only notify runs again")
	}
	writes = append(audit, checkpointer.Write{Channel: "messages", Value: msg("assistant", "You'll get a confirmation email shortly.")})
	cfg, _, err = g.step(ctx, tup.Config, "loop", "notify", writes)
	if err != nil {
		return err
	}
	d.say("agent: You'll get a confirmation email shortly.")
	d.say("checkpoint %s (step 3)", short(cfg.CheckpointID))

	d.section("History, newest first")
	for t, err := range d.h.Saver.List(ctx, &checkpointer.Config{ThreadID: demoThread}, checkpointer.ListOptions{}) {
		if err != nil {
			return err
		}
		parent := "—"
		if t.ParentConfig != nil {
			parent = short(t.ParentConfig.CheckpointID)
		}
		d.say("%s  step %-2v %-6v parent %-8s wrote %v", short(t.Config.CheckpointID), t.Metadata["step"], t.Metadata["source"], parent, t.Checkpoint.UpdatedChannels)
	}

	d.section("Time travel: fork from step 1 and take another path")
	g.runID = "run-2"
	fork, _, err := g.step(ctx, lookupCfg, "fork", "", []checkpointer.Write{
		{Channel: "messages", Value: msg("user", "Actually, could I get store credit instead of a refund?")},
	})
	if err != nil {
		return err
	}
	d.say("forked %s from %s (step 1): the refund branch is untouched", short(fork.CheckpointID), short(lookupCfg.CheckpointID))
	fork, _, err = g.step(ctx, fork, "loop", "agent", []checkpointer.Write{
		{Channel: "messages", Value: msg("assistant", "Of course — I've added $49.00 store credit to your account.")},
		{Channel: "credit_cents", Value: int64(4900)},
	})
	if err != nil {
		return err
	}
	branch, err := d.h.Saver.GetTuple(ctx, fork)
	if err != nil {
		return err
	}
	msgs, _ := branch.Checkpoint.ChannelValues["messages"].([]any)
	d.say("the fork's state has %d messages and no refund: %v", len(msgs), branch.Checkpoint.ChannelValues["refund"] == nil)
	latest := 0
	for range d.h.Saver.List(ctx, &checkpointer.Config{ThreadID: demoThread}, checkpointer.ListOptions{}) {
		latest++
	}
	d.say("the thread now holds %d checkpoints across both branches", latest)
	return nil
}

var demoUser = store.Namespace{"users", "alice", "memories"}

func (d *demo) memories(ctx context.Context) error {
	d.section("Long-term memory, recalled from another thread")
	facts := map[string]string{
		"contact":  "Prefers to be contacted by email; please never phone her.",
		"plan":     "Premium plan customer since 2021, billed monthly in USD.",
		"incident": "Was double-charged on invoice INV-1042; the duplicate was refunded.",
		"language": "Writes in English and sometimes in Portuguese.",
	}
	for _, k := range []string{"contact", "plan", "incident", "language"} {
		if err := d.h.Store.Put(ctx, demoUser, k, map[string]any{"text": facts[k], "source": demoThread}); err != nil {
			return err
		}
		d.say("remembered %-9s %q", k+":", facts[k])
	}
	d.say("")
	d.say("thread support-9c21, a week later — user: \"Could you call me about my plan?\"")
	res, err := d.h.Store.Search(ctx, store.Namespace{"users", "alice"}, store.SearchOptions{
		Query: "how does the customer want to be contacted, call or email", Limit: 2,
	})
	if err != nil {
		return err
	}
	for _, r := range res {
		score := "n/a"
		if r.Score != nil {
			score = fmt.Sprintf("%.3f", *r.Score)
		}
		d.say("recalled %-9s score %s  %q", r.Key+":", score, r.Value["text"])
	}
	if len(res) > 0 && res[0].Key == "contact" {
		d.say("agent: I'll follow up by email rather than phone, as you prefer.")
	}
	return nil
}

func (d *demo) rotation(ctx context.Context) error {
	d.section("Key rotation with re-encryption")
	if d.cfg.Encryption == config.EncryptionOff {
		d.say("encryption is off; skipped")
		return nil
	}
	newKey, err := config.GenerateKey()
	if err != nil {
		return err
	}
	old := d.cfg.Keys
	d.cfg.Keys = config.Keys{Primary: newKey, Previous: append([]string{old.Primary}, old.Previous...)}
	if err := d.h.Close(); err != nil {
		return err
	}
	d.h = nil
	if err := d.open(ctx); err != nil {
		return err
	}
	d.say("new primary key %s; the old key %s now only decrypts", d.h.KeyIDs()[0], d.h.KeyIDs()[1])
	sv, st, err := d.h.Reencrypt(ctx, reencrypt.Options{})
	if err != nil {
		return err
	}
	d.say("re-encrypted %d checkpoint values and %d memories under the new key", sv.Rewritten, st.Rewritten)
	// Drop the old key entirely: everything must still read.
	d.cfg.Keys = config.Keys{Primary: newKey}
	if err := d.h.Close(); err != nil {
		return err
	}
	d.h = nil
	if err := d.open(ctx); err != nil {
		return err
	}
	tup, err := d.h.Saver.GetTuple(ctx, checkpointer.Config{ThreadID: demoThread})
	if err != nil {
		return err
	}
	it, err := d.h.Store.Get(ctx, demoUser, "contact")
	if err != nil {
		return err
	}
	d.say("with only the new key: latest checkpoint has %d channels; memory says %q", len(tup.Checkpoint.ChannelValues), it.Value["text"])
	if d.kept {
		fmt.Fprintf(d.out, "   to read the kept database %s: export LANGGRAPH_AES_KEY=%s\n", d.path, newKey)
	}
	return nil
}

func (d *demo) rawLook(ctx context.Context) error {
	d.section("What someone with the database file sees")
	db, err := sql.Open("sqlite", "file:"+d.path+"?mode=ro")
	if err != nil {
		return err
	}
	defer db.Close()
	rows, err := db.QueryContext(ctx, `SELECT channel, type, blob FROM checkpoint_blobs WHERE thread_id = ? AND type <> 'empty' ORDER BY channel LIMIT 4`, demoThread)
	if err != nil {
		return err
	}
	for rows.Next() {
		var ch, typ string
		var blob []byte
		if err := rows.Scan(&ch, &typ, &blob); err != nil {
			rows.Close()
			return err
		}
		d.say("checkpoint_blobs  %-12s type %-12s %s", ch, typ, preview(blob))
	}
	if err := rows.Close(); err != nil {
		return err
	}
	rows, err = db.QueryContext(ctx, `SELECT prefix, key, value FROM store ORDER BY key LIMIT 2`)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var prefix, key string
		var value []byte
		if err := rows.Scan(&prefix, &key, &value); err != nil {
			return err
		}
		d.say("store  %s/%-8s %s", prefix, key, clip(string(value), 70))
	}
	d.say("ids, metadata, versions, namespaces and keys stay readable; vectors are numbers in a keyed space,")
	d.say("useless without the key for matching or inverting texts (see README: what is encrypted)")
	return rows.Err()
}

func preview(b []byte) string {
	if len(b) > 20 {
		return hex.EncodeToString(b[:20]) + fmt.Sprintf("… (%d bytes)", len(b))
	}
	return hex.EncodeToString(b)
}

func clip(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

// short abbreviates a checkpoint id for the transcript. A UUIDv6 starts
// with its timestamp's high bits, which neighbouring checkpoints share, so
// the random tail is what tells them apart.
func short(id string) string {
	if len(id) > 8 {
		return "…" + id[len(id)-8:]
	}
	return id
}
