package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memvault/memvault/internal/pgtest"
)

// TestBenchCheckpointerWithJS runs a short bench with the JS LangGraph
// column: the cluster's durability settings come first, then every op at
// both concurrencies for the baseline, memvault and JS, each with
// completed operations (JS's list10 itself checks it got ten tuples).
func TestBenchCheckpointerWithJS(t *testing.T) {
	jsDir := needJS(t)
	out := cli(t, nil, "", "bench", "checkpointer", "--dsn", pgtest.SchemaDSN(t), "--duration", "400ms",
		"--concurrency", "2", "--ops", "put,put_writes,get_tuple_by_id,list10", "--js", jsDir, "--json").must(t, 0).stdout
	lines := strings.Split(strings.TrimSpace(out), "\n")
	var first struct {
		Cluster map[string]string `json:"cluster"`
	}
	if err := json.Unmarshal([]byte(lines[0]), &first); err != nil || first.Cluster["fsync"] == "" || first.Cluster["synchronous_commit"] == "" {
		t.Fatalf("first line %q is not the cluster's settings (%v)", lines[0], err)
	}
	seen := map[string]bool{}
	for _, l := range lines[1:] {
		var r benchRow
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatalf("row %q: %v", l, err)
		}
		if r.OpsPerS <= 0 || r.P50ms <= 0 {
			t.Errorf("row %+v completed nothing", r)
		}
		seen[r.Op+"/"+r.Mode+"/"+string(rune('0'+r.Concurrency))] = true
	}
	for _, op := range []string{"put", "put_writes", "get_tuple_by_id", "list10"} {
		for _, mode := range []string{"raw-pgx", "plaintext", "encrypted", jsMode} {
			for _, c := range []string{"1", "2"} {
				if !seen[op+"/"+mode+"/"+c] {
					t.Errorf("no row for %s %s c=%s", op, mode, c)
				}
			}
		}
	}
}

// needJS returns the absolute path of interop/js, skipping the test in
// -short mode (failing it otherwise) when node or the JS packages are
// missing.
func needJS(t *testing.T) string {
	t.Helper()
	jsDir, err := filepath.Abs(filepath.Join("..", "..", "interop", "js"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := exec.LookPath("node"); err != nil || !exists(filepath.Join(jsDir, "node_modules", "@langchain", "langgraph-checkpoint-postgres")) {
		msg := "node or interop/js/node_modules missing: run scripts/install-deps.sh"
		if testing.Short() {
			t.Skip(msg)
		}
		t.Fatal(msg)
	}
	return jsDir
}

// TestBenchStoreWithJS runs a tiny store bench with the column of JS
// LangGraph's PostgresStore: every op at both concurrencies for it beside
// the baseline and memvault (JS's get and search check what they found),
// and, in the table, the JS store's seeding, the note that its embedding
// cost is excluded and the ratios to it.
func TestBenchStoreWithJS(t *testing.T) {
	jsDir := needJS(t)
	args := []string{"bench", "store", "--dsn", pgtest.SchemaDSN(t), "--dims", "24", "--items", "40",
		"--duration", "200ms", "--concurrency", "2", "--js", jsDir}
	_, rows := benchRows(t, cli(t, nil, "", append(args, "--json")...).must(t, 0).stdout)
	wantRows(t, rows, []string{"put", "get", "search_k10"}, []string{rawPGX, "plaintext/hnsw", "encrypted/flat", jsMode}, 1, 2)

	out := cli(t, nil, "", append(args, "--ops", "get")...).must(t, 0).stdout
	for _, want := range []string{jsMode + ": JS LangGraph's PostgresStore", "seeded 40 items", "embedding cost excluded"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	// The ratios to JS: memvault's store modes, each at both concurrencies.
	_, ratios, found := strings.Cut(out, "throughput relative to "+jsMode)
	ratios, _, _ = strings.Cut(ratios, "\n\n")
	if !found || strings.Count(ratios, "plaintext/hnsw") != 2 || strings.Count(ratios, "encrypted/flat") != 2 {
		t.Errorf("no ratios of memvault's modes to %s:\n%s", jsMode, out)
	}
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// TestBenchStoreShapes runs the store bench at a tiny shape with --dims on
// PostgreSQL and on SQLite: every op has its raw baseline row beside the
// library's, at both concurrencies; bad shapes are usage errors.
func TestBenchStoreShapes(t *testing.T) {
	for _, tc := range []struct {
		backend string
		args    []string
		modes   map[string][]string // op → modes
	}{
		{"postgres", []string{"--dsn", pgtest.SchemaDSN(t)}, map[string][]string{
			"put":        {rawPGX, "plaintext/hnsw", "encrypted/hnsw", "plaintext/flat", "encrypted/flat"},
			"get":        {rawPGX, "plaintext/hnsw", "encrypted/flat"},
			"search_k10": {rawPGX, rawPGXJoin, "plaintext/hnsw", "encrypted/hnsw", "plaintext/flat", "encrypted/flat"},
		}},
		{"sqlite", nil, map[string][]string{
			"put":        {rawSQL, "plaintext", "encrypted"},
			"get":        {rawSQL, "plaintext", "encrypted"},
			"search_k10": {rawSQL, "plaintext", "encrypted"},
		}},
	} {
		t.Run(tc.backend, func(t *testing.T) {
			args := append([]string{"bench", "store", "--backend", tc.backend, "--dims", "24", "--items", "40",
				"--duration", "200ms", "--concurrency", "2", "--json"}, tc.args...)
			out := cli(t, nil, "", args...).must(t, 0).stdout
			seen := map[string]bool{}
			for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
				var r benchRow
				if err := json.Unmarshal([]byte(l), &r); err != nil {
					t.Fatalf("line %q: %v", l, err)
				}
				if r.Op == "" {
					continue // the cluster's settings
				}
				if r.OpsPerS <= 0 {
					t.Errorf("row %+v completed nothing", r)
				}
				seen[fmt.Sprintf("%s/%s/%d", r.Op, r.Mode, r.Concurrency)] = true
			}
			for op, modes := range tc.modes {
				for _, m := range modes {
					for _, c := range []int{1, 2} {
						if !seen[fmt.Sprintf("%s/%s/%d", op, m, c)] {
							t.Errorf("no row for %s %s c=%d", op, m, c)
						}
					}
				}
			}
		})
	}
	for _, bad := range [][]string{{"--dims", "0"}, {"--dims", "100000"}, {"--items", "0"}, {"--backend", "oracle"}, {"--js", "interop/js"}} {
		res := cli(t, nil, "", append([]string{"bench", "store", "--backend", "sqlite"}, bad...)...)
		if res.code == 0 {
			t.Errorf("bench store %v succeeded", bad)
		}
	}
}
