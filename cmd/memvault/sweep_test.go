package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/config"
	"github.com/memvault/memvault/memvaulttest/pgtest"
	"github.com/memvault/memvault/vault"
)

// seedSweep writes, through the configuration env names, an idle thread
// (3 checkpoints two days old) and a busy one (4 fresh checkpoints).
func seedSweep(t *testing.T, env []string) {
	t.Helper()
	vars := map[string]string{}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		vars[k] = v
	}
	c, err := config.FromLookup(func(k string) (string, bool) { v, ok := vars[k]; return v, ok })
	if err != nil {
		t.Fatal(err)
	}
	c.Embeddings = "none"
	h, err := vault.Open(t.Context(), c)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	put := func(thread string, ids []string) {
		parent := ""
		for i, id := range ids {
			ver := h.Saver.NextVersion(fmt.Sprint(i))
			cp := &checkpointer.Checkpoint{V: 4, ID: id, TS: time.Now().UTC(),
				ChannelValues: map[string]any{"n": i}, ChannelVersions: map[string]string{"n": ver}}
			if _, err := h.Saver.Put(t.Context(), checkpointer.Config{ThreadID: thread, CheckpointID: parent}, cp, checkpointer.Metadata{"step": i}, map[string]string{"n": ver}); err != nil {
				t.Fatal(err)
			}
			parent = id
		}
	}
	old := time.Now().Add(-48 * time.Hour)
	var idle, busy []string
	for i := range 3 {
		idle = append(idle, checkpointer.IDFloor(old.Add(time.Duration(i) * time.Millisecond))[:19]+fmt.Sprintf("%04x-00000000000%d", 0x8000+i, i))
	}
	for i := range 4 {
		busy = append(busy, checkpointer.NewID(i))
	}
	put("idle-thread", idle)
	put("busy-thread", busy)
}

// TestThreadsSweep: `threads sweep` refuses an empty or negative policy,
// reports without deleting in --dry-run, takes the policy from the
// environment with flags overriding it, and removes what it reported.
func TestThreadsSweep(t *testing.T) {
	backends := map[string][]string{
		"sqlite":   sqliteEnv(t),
		"postgres": {"MEMVAULT_DSN=" + pgtest.SchemaDSN(t), "LANGGRAPH_AES_KEY=" + testKey},
	}
	for name, env := range backends {
		t.Run(name, func(t *testing.T) {
			seedSweep(t, env)
			if r := cli(t, env, "", "threads", "sweep").must(t, 2); !strings.Contains(r.stderr, "needs a policy") {
				t.Fatalf("empty policy: %s", r.stderr)
			}
			if r := cli(t, env, "", "threads", "sweep", "--keep-latest", "-1").must(t, 2); !strings.Contains(r.stderr, "invalid retention policy") {
				t.Fatalf("negative policy: %s", r.stderr)
			}
			cli(t, append(env, "MEMVAULT_RETENTION_KEEP_LATEST=many"), "", "threads", "sweep").must(t, 1)

			var dry checkpointer.SweepReport
			r := cli(t, env, "", "threads", "sweep", "--dry-run", "--idle-ttl", "24h", "--keep-latest", "2", "--json").must(t, 0)
			if err := json.Unmarshal([]byte(r.stdout), &dry); err != nil {
				t.Fatalf("%v\n%s", err, r.stdout)
			}
			// idle: 3 checkpoints and 3 values; busy: 2 checkpoints and
			// their 2 values.
			if !dry.DryRun || dry.ThreadsDeleted != 1 || dry.Checkpoints != 5 || dry.Blobs != 5 || dry.ThreadsScanned != 2 {
				t.Fatalf("dry run report %+v", dry)
			}
			if out := cli(t, env, "", "threads", "list", "--json").must(t, 0).stdout; !strings.Contains(out, "idle-thread") {
				t.Fatalf("dry run deleted the idle thread:\n%s", out)
			}

			r = cli(t, append(env, "MEMVAULT_RETENTION_IDLE_TTL=24h", "MEMVAULT_RETENTION_KEEP_LATEST=9"), "", "threads", "sweep", "--keep-latest", "2").must(t, 0)
			if want := "removed 1 threads, 5 checkpoints, 0 pending writes, 5 values"; !strings.Contains(r.stdout, want) {
				t.Fatalf("sweep printed %q, want %q", r.stdout, want)
			}
			// The progress on stderr counts the threads scanned and what
			// was removed, after each batch.
			if want := "done, 2 threads scanned (removed 1 threads, 5 checkpoints, 0 pending writes, 5 values)"; !strings.Contains(r.stderr, want) {
				t.Fatalf("sweep progress %q, want %q", r.stderr, want)
			}
			out := cli(t, env, "", "threads", "list", "--json").must(t, 0).stdout
			if strings.Contains(out, "idle-thread") || !strings.Contains(out, "busy-thread") {
				t.Fatalf("after sweep:\n%s", out)
			}
			// history --json prints one tuple per line.
			hist := strings.Split(strings.TrimSpace(cli(t, env, "", "threads", "history", "busy-thread", "--json").must(t, 0).stdout), "\n")
			if len(hist) != 2 {
				t.Fatalf("busy thread has %d checkpoints after --keep-latest 2, want 2:\n%s", len(hist), strings.Join(hist, "\n"))
			}
			cli(t, env, "", "threads", "show", "busy-thread").must(t, 0)
		})
	}
}
