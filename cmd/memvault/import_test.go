package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/checkpointer/threadfile"
	"github.com/memvault/memvault/memvaulttest/pgtest"
)

// importBackends are the targets the import tests run on.
func importBackends(t *testing.T) map[string]func(t *testing.T) []string {
	return map[string]func(t *testing.T) []string{
		"sqlite": sqliteEnv,
		"postgres": func(t *testing.T) []string {
			return []string{"MEMVAULT_DSN=" + pgtest.SchemaDSN(t), "LANGGRAPH_AES_KEY=" + testKey}
		},
	}
}

// chainExport returns an export of n checkpoints of thread, each the parent
// of the next and each with one pending write, as JSON lines.
func chainExport(t *testing.T, thread string, n int) []string {
	t.Helper()
	var out []string
	parent := ""
	for i := range n {
		id := checkpointer.NewID(i)
		v := fmt.Sprintf("%032d.0.5", i+1)
		l := threadfile.Line{
			Format: threadfile.Format, ThreadID: thread, CheckpointID: id, ParentID: parent, V: 4,
			TS:              "2026-11-01T10:00:00.000000+00:00",
			ChannelValues:   map[string]threadfile.Value{"n": {Type: "json", JSON: json.RawMessage(fmt.Sprint(i))}},
			ChannelVersions: map[string]string{"n": v},
			VersionsSeen:    map[string]map[string]string{"node": {"n": v}},
			UpdatedChannels: []string{"n"},
			Metadata:        threadfile.Metadata{"source": "loop", "step": i},
			PendingWrites:   []threadfile.Write{{TaskID: fmt.Sprintf("task-%d", i), Channel: "n", Value: threadfile.Value{Type: "json", JSON: json.RawMessage(fmt.Sprint(100 + i))}}},
		}
		b, err := json.Marshal(l)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, string(b))
		parent = id
	}
	return out
}

func writeLines(t *testing.T, lines []string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "export.jsonl")
	if err := os.WriteFile(p, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// historyWrites returns, per checkpoint id, how many pending writes the
// thread's history shows.
func historyWrites(t *testing.T, env []string, thread string) map[string]int {
	t.Helper()
	r := cli(t, env, "", "threads", "history", thread, "--json")
	if r.code != 0 {
		return map[string]int{}
	}
	m := map[string]int{}
	dec := json.NewDecoder(strings.NewReader(r.stdout))
	for dec.More() {
		var d tupleDoc
		if err := dec.Decode(&d); err != nil {
			t.Fatalf("history: %v\n%s", err, r.stdout)
		}
		m[d.Config.Configurable.CheckpointID] = len(d.PendingWrites)
	}
	return m
}

// TestImportFailingMidwayWritesNothing: a file whose 5th line cannot be
// imported leaves the target without any checkpoint of the thread.
func TestImportFailingMidwayWritesNothing(t *testing.T) {
	for name, envf := range importBackends(t) {
		t.Run(name, func(t *testing.T) {
			env := envf(t)
			lines := chainExport(t, "midway", 6)
			// A value that does not decode: only found when line 5 is written.
			lines[4] = strings.Replace(lines[4], `"channel_values":{"n":{"type":"json","json":4}}`, `"channel_values":{"n":{"type":"msgpack","base64":"!!!"}}`, 1)
			r := cli(t, env, "", "threads", "import", writeLines(t, lines))
			if r.code == 0 || !strings.Contains(r.stderr, "line 5") {
				t.Fatalf("import of a broken file: exit %d, stderr %q; want a refusal naming line 5", r.code, r.stderr)
			}
			if got := historyWrites(t, env, "midway"); len(got) != 0 {
				t.Fatalf("after a refused import the target holds %d checkpoints, want none", len(got))
			}
		})
	}
}

// TestReimportCompletesWrites: a target holding checkpoints without their
// pending writes (what an import that stopped mid-way left behind) gets
// them from a re-import, and a further import changes nothing.
func TestReimportCompletesWrites(t *testing.T) {
	for name, envf := range importBackends(t) {
		t.Run(name, func(t *testing.T) {
			env := envf(t)
			lines := chainExport(t, "resume", 5)
			// The partial state: the first three checkpoints, no writes.
			var partial []string
			for _, l := range lines[:3] {
				partial = append(partial, strings.Replace(l, `"pending_writes":[{`, `"pending_writes":[],"x":[{`, 1))
			}
			cli(t, env, "", "threads", "import", writeLines(t, partial)).must(t, 0)
			for id, n := range historyWrites(t, env, "resume") {
				if n != 0 {
					t.Fatalf("partial state: %s has %d writes", id, n)
				}
			}
			full := writeLines(t, lines)
			cli(t, env, "", "threads", "import", full).must(t, 0)
			got := historyWrites(t, env, "resume")
			if len(got) != 5 {
				t.Fatalf("after re-import: %d checkpoints, want 5", len(got))
			}
			for id, n := range got {
				if n != 1 {
					t.Errorf("after re-import %s has %d pending writes, want 1", id, n)
				}
			}
			r := cli(t, env, "", "threads", "import", full, "--json").must(t, 0)
			var st threadfile.ImportStats
			if err := json.Unmarshal([]byte(r.stdout), &st); err != nil {
				t.Fatal(err)
			}
			if st.Imported != 0 || st.Skipped != 5 {
				t.Fatalf("third import = %+v, want nothing imported", st)
			}
			for id, n := range historyWrites(t, env, "resume") {
				if n != 1 {
					t.Errorf("after a repeated import %s has %d pending writes, want 1", id, n)
				}
			}
		})
	}
}

// TestImportRefusalsNameTheLine: bad ids, versions, parents and JSON are
// refused with the line number, before anything is written.
func TestImportRefusalsNameTheLine(t *testing.T) {
	for name, envf := range importBackends(t) {
		t.Run(name, func(t *testing.T) {
			cases := []struct {
				name string
				line int
				edit func(lines []string, ids []string)
			}{
				{"malformed JSON", 5, func(l, _ []string) { l[4] = l[4][:len(l[4])/2] }},
				{"id not a checkpoint id", 3, func(l, ids []string) { l[2] = strings.ReplaceAll(l[2], ids[2], "not-a-uuid") }},
				// Versions follow Put's rule (checkpointer.ValidateVersion):
				// any non-empty text, so an empty one is refused.
				{"empty version", 4, func(l, _ []string) {
					l[3] = regexp.MustCompile(`"channel_versions":\{"n":"[^"]*"`).ReplaceAllString(l[3], `"channel_versions":{"n":""`)
				}},
				{"empty seen version", 2, func(l, _ []string) {
					l[1] = regexp.MustCompile(`"versions_seen":\{"node":\{"n":"[^"]*"`).ReplaceAllString(l[1], `"versions_seen":{"node":{"n":""`)
				}},
				{"duplicate checkpoint", 6, func(l, ids []string) {
					l[5] = strings.ReplaceAll(l[5], ids[5], ids[1])
				}},
				{"parent missing", 4, func(l, ids []string) {
					l[3] = strings.Replace(l[3], `"parent_checkpoint_id":"`+ids[2]+`"`, `"parent_checkpoint_id":"`+checkpointer.NewID(9)+`"`, 1)
				}},
			}
			env := envf(t)
			for _, c := range cases {
				t.Run(c.name, func(t *testing.T) {
					thread := "refuse-" + strings.ReplaceAll(c.name, " ", "-")
					lines := chainExport(t, thread, 6)
					var ids []string
					for _, l := range lines {
						var el threadfile.Line
						if err := json.Unmarshal([]byte(l), &el); err != nil {
							t.Fatal(err)
						}
						ids = append(ids, el.CheckpointID)
					}
					c.edit(lines, ids)
					r := cli(t, env, "", "threads", "import", writeLines(t, lines))
					want := fmt.Sprintf("line %d", c.line)
					if r.code == 0 || !strings.Contains(r.stderr, want) {
						t.Fatalf("exit %d, stderr %q; want a refusal naming %q", r.code, r.stderr, want)
					}
					if got := historyWrites(t, env, thread); len(got) != 0 {
						t.Fatalf("after a refusal the target holds %d checkpoints, want none", len(got))
					}
				})
			}
		})
	}
}
