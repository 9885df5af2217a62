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
	for _, bad := range [][]string{{"--dims", "0"}, {"--dims", "100000"}, {"--items", "0"}, {"--backend", "oracle"}} {
		res := cli(t, nil, "", append([]string{"bench", "store", "--backend", "sqlite"}, bad...)...)
		if res.code == 0 {
			t.Errorf("bench store %v succeeded", bad)
		}
	}
}
