package main

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memvault/memvault/internal/pgtest"
)

// benchRows parses --json output: the settings line, then rows.
func benchRows(t *testing.T, out string) (map[string]string, []benchRow) {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(out), "\n")
	var first struct {
		Cluster map[string]string `json:"cluster"`
	}
	if err := json.Unmarshal([]byte(lines[0]), &first); err != nil || len(first.Cluster) == 0 {
		t.Fatalf("first line %q is not the settings (%v)", lines[0], err)
	}
	var rows []benchRow
	for _, l := range lines[1:] {
		var r benchRow
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatalf("row %q: %v", l, err)
		}
		if r.OpsPerS <= 0 || r.P50ms <= 0 {
			t.Errorf("row %+v completed nothing", r)
		}
		rows = append(rows, r)
	}
	return first.Cluster, rows
}

func wantRows(t *testing.T, rows []benchRow, ops, modes []string, concs ...int) {
	t.Helper()
	seen := map[string]bool{}
	for _, r := range rows {
		seen[r.Op+"/"+r.Mode+"/"+string(rune('0'+r.Concurrency))] = true
	}
	for _, op := range ops {
		for _, m := range modes {
			for _, c := range concs {
				if !seen[op+"/"+m+"/"+string(rune('0'+c))] {
					t.Errorf("no row for %s %s c=%d", op, m, c)
				}
			}
		}
	}
}

// TestBenchShapesPostgres runs the growing-messages workload (with the JS
// column when node and the JS packages are there) and scale mode at tiny
// sizes on PostgreSQL. Scale mode checks by itself that a copied thread
// reads back as the template thread the saver wrote.
func TestBenchShapesPostgres(t *testing.T) {
	args := []string{"bench", "checkpointer", "--dsn", pgtest.SchemaDSN(t), "--duration", "300ms", "--concurrency", "2",
		"--workload", "messages", "--scale", "600", "--threads", "30", "--scale-base", "100", "--json"}
	modes := []string{"raw-pgx", "plaintext", "encrypted"}
	jsDir, _ := filepath.Abs(filepath.Join("..", "..", "interop", "js"))
	if _, err := exec.LookPath("node"); err == nil && exists(filepath.Join(jsDir, "node_modules", "@langchain", "langgraph-checkpoint-postgres")) {
		args = append(args, "--js", jsDir)
		modes = append(modes, jsMode)
	}
	settings, rows := benchRows(t, cli(t, nil, "", args...).must(t, 0).stdout)
	if settings["fsync"] == "" {
		t.Errorf("settings %v lack fsync", settings)
	}
	wantRows(t, rows, []string{"put_messages", "get_messages_50", "get_messages_200"}, modes, 1, 2)
	wantRows(t, rows, []string{"get_tuple", "get_tuple_by_id", "list10", "put"},
		[]string{"raw-pgx@100", "plaintext@100", "raw-pgx@600", "plaintext@600"}, 1, 2)
}

// TestBenchShapesSQLite runs both workloads at tiny sizes on a temporary
// SQLite file, with raw SQL on the same file.
func TestBenchShapesSQLite(t *testing.T) {
	out := cli(t, nil, "", "bench", "checkpointer", "--backend", "sqlite", "--duration", "300ms", "--concurrency", "2",
		"--workload", "messages", "--scale", "600", "--threads", "30", "--scale-base", "100", "--json").must(t, 0).stdout
	settings, rows := benchRows(t, out)
	if settings["journal_mode"] != "wal" {
		t.Errorf("settings %v: journal_mode not wal", settings)
	}
	wantRows(t, rows, []string{"put_messages", "get_messages_50", "get_messages_200"}, []string{"raw-sql", "plaintext", "encrypted"}, 1, 2)
	wantRows(t, rows, []string{"get_tuple", "get_tuple_by_id", "list10", "put"},
		[]string{"raw-sql@100", "plaintext@100", "raw-sql@600", "plaintext@600"}, 1, 2)
}

// TestBenchShapesFlags refuses what the shape workloads cannot run.
func TestBenchShapesFlags(t *testing.T) {
	for _, args := range [][]string{
		{"--backend", "mysql", "--workload", "messages"},
		{"--workload", "bigger"},
		{"--backend", "sqlite"},
		{"--backend", "sqlite", "--scale", "100", "--threads", "1000"},
		{"--backend", "sqlite", "--scale", "1000000", "--threads", "10"},
		{"--backend", "sqlite", "--workload", "messages", "--ops", "list"},
	} {
		r := cli(t, nil, "", append([]string{"bench", "checkpointer"}, args...)...)
		if r.code == 0 {
			t.Errorf("%v: exit 0, want a usage error", args)
		}
	}
}
