package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memvault/memvault/memvaulttest/pgtest"
)

// runBench runs a bench into a buffer, failing the test on an error.
func runBench(t *testing.T, fn func(ctx context.Context, w *bytes.Buffer) error) string {
	t.Helper()
	var out bytes.Buffer
	if err := fn(context.Background(), &out); err != nil {
		t.Fatalf("bench: %v\noutput so far:\n%s", err, out.String())
	}
	return out.String()
}

// TestCheckpointerWithJS runs a short bench with the JS LangGraph column:
// the cluster's durability settings come first, then every op at both
// concurrencies for the baseline, memvault and JS, each with completed
// operations (JS's list10 itself checks it got ten tuples).
func TestCheckpointerWithJS(t *testing.T) {
	jsDir := needJS(t)
	o := CheckpointerOptions{Options: Options{DSN: pgtest.SchemaDSN(t), Duration: 400 * time.Millisecond, Concurrency: 2,
		Ops: []string{"put", "put_writes", "get_tuple_by_id", "list10"}, JSDir: jsDir, JSON: true}}
	out := runBench(t, func(ctx context.Context, w *bytes.Buffer) error { return RunCheckpointer(ctx, w, o) })
	settings, rows := benchRows(t, out)
	if settings["fsync"] == "" || settings["synchronous_commit"] == "" {
		t.Errorf("settings %v lack fsync or synchronous_commit", settings)
	}
	wantRows(t, rows, o.Ops, []string{"raw-pgx", "plaintext", "encrypted", auditedMode, groupedMode, auditedGroupedMode, jsMode}, 1, 2)
}

// needJS returns the absolute path of interop/js, skipping the test in
// -short mode (failing it otherwise) when node or the JS packages are
// missing.
func needJS(t *testing.T) string {
	t.Helper()
	jsDir, ok := jsAvailable(t)
	if !ok {
		msg := "node or interop/js/node_modules missing: run scripts/install-deps.sh"
		if testing.Short() {
			t.Skip(msg)
		}
		t.Fatal(msg)
	}
	return jsDir
}

// jsAvailable returns the absolute path of interop/js and whether node and
// the JS packages are there.
func jsAvailable(t *testing.T) (string, bool) {
	t.Helper()
	jsDir, err := filepath.Abs(filepath.Join("..", "..", "..", "interop", "js"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = exec.LookPath("node")
	return jsDir, err == nil && exists(filepath.Join(jsDir, "node_modules", "@langchain", "langgraph-checkpoint-postgres"))
}

// TestStoreWithJS runs a tiny store bench with the column of JS
// LangGraph's PostgresStore: every op at both concurrencies for it beside
// the baseline and memvault (JS's get and search check what they found),
// and, in the table, the JS store's seeding, the note that its embedding
// cost is excluded and the ratios to it.
func TestStoreWithJS(t *testing.T) {
	jsDir := needJS(t)
	o := StoreOptions{Options: Options{DSN: pgtest.SchemaDSN(t), Duration: 200 * time.Millisecond, Concurrency: 2, JSDir: jsDir, JSON: true}, Items: 40, Dims: 24}
	_, rows := benchRows(t, runBench(t, func(ctx context.Context, w *bytes.Buffer) error { return RunStore(ctx, w, o) }))
	wantRows(t, rows, []string{"put", "get", "search_k10"}, []string{rawPGX, "plaintext/hnsw", "encrypted/flat", jsMode}, 1, 2)

	o.JSON, o.Ops = false, []string{"get"}
	out := runBench(t, func(ctx context.Context, w *bytes.Buffer) error { return RunStore(ctx, w, o) })
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

// TestStoreShapes runs the store bench at a tiny shape on PostgreSQL and
// on SQLite: every op has its raw baseline row beside the library's, at
// both concurrencies.
func TestStoreShapes(t *testing.T) {
	for _, tc := range []struct {
		backend, dsn string
		modes        map[string][]string // op → modes
	}{
		{"postgres", pgtest.SchemaDSN(t), map[string][]string{
			"put":        {rawPGX, "plaintext/hnsw", "encrypted/hnsw", "plaintext/flat", "encrypted/flat"},
			"get":        {rawPGX, "plaintext/hnsw", "encrypted/flat"},
			"search_k10": {rawPGX, rawPGXJoin, "plaintext/hnsw", "encrypted/hnsw", "plaintext/flat", "encrypted/flat"},
		}},
		{"sqlite", "", map[string][]string{
			"put":        {rawSQL, "plaintext", "encrypted"},
			"get":        {rawSQL, "plaintext", "encrypted"},
			"search_k10": {rawSQL, "plaintext", "encrypted"},
		}},
	} {
		t.Run(tc.backend, func(t *testing.T) {
			o := StoreOptions{Options: Options{DSN: tc.dsn, Backend: tc.backend, Duration: 200 * time.Millisecond, Concurrency: 2, JSON: true}, Items: 40, Dims: 24}
			out := runBench(t, func(ctx context.Context, w *bytes.Buffer) error { return RunStore(ctx, w, o) })
			seen := map[string]bool{}
			for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
				var r Row
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
}

// TestOptionsRefused checks that the options the benches cannot run are
// refused with ErrOptions before anything runs or is printed, and that
// the zero values stand for the documented defaults.
func TestOptionsRefused(t *testing.T) {
	sqlite := Options{Backend: "sqlite"}
	for name, run := range map[string]func(ctx context.Context, w *bytes.Buffer) error{
		"store dims":                        storeRun(StoreOptions{Options: sqlite, Dims: MaxDims + 1}),
		"store negative dims":               storeRun(StoreOptions{Options: sqlite, Dims: -1}),
		"store items":                       storeRun(StoreOptions{Options: sqlite, Items: -1}),
		"store backend":                     storeRun(StoreOptions{Options: Options{Backend: "oracle"}}),
		"store js on sqlite":                storeRun(StoreOptions{Options: Options{Backend: "sqlite", JSDir: "interop/js"}}),
		"store op":                          storeRun(StoreOptions{Options: Options{Backend: "sqlite", Ops: []string{"scan"}}}),
		"store no dsn":                      storeRun(StoreOptions{}),
		"store concurrency":                 storeRun(StoreOptions{Options: Options{Backend: "sqlite", Concurrency: -1}}),
		"store duration":                    storeRun(StoreOptions{Options: Options{Backend: "sqlite", Duration: -1}}),
		"checkpointer no dsn":               cpRun(CheckpointerOptions{}),
		"checkpointer op":                   cpRun(CheckpointerOptions{Options: Options{Ops: []string{"list"}}}),
		"checkpointer backend":              cpRun(CheckpointerOptions{Options: Options{Backend: "mysql"}, Workload: "messages"}),
		"checkpointer js on sqlite classic": cpRun(CheckpointerOptions{Options: Options{Backend: "sqlite", JSDir: "interop/js"}}),
		"checkpointer workload":             cpRun(CheckpointerOptions{Workload: "bigger"}),
		"checkpointer threads":              cpRun(CheckpointerOptions{Options: sqlite, Scale: 100, Threads: 1000}),
		"checkpointer per thread":           cpRun(CheckpointerOptions{Options: sqlite, Scale: 1000000, Threads: 10}),
		"checkpointer scale base":           cpRun(CheckpointerOptions{Options: sqlite, Scale: 600, Threads: 30, ScaleBase: 10}),
		"checkpointer shape op":             cpRun(CheckpointerOptions{Options: Options{Backend: "sqlite", Ops: []string{"list"}}, Workload: "messages"}),
		"checkpointer js on sqlite":         cpRun(CheckpointerOptions{Options: Options{Backend: "sqlite", JSDir: "interop/js"}, Workload: "messages"}),
		"checkpointer concurrency":          cpRun(CheckpointerOptions{Options: Options{DSN: "postgres://nobody@127.0.0.1:1/x", Concurrency: -2}}),
	} {
		var out bytes.Buffer
		err := run(context.Background(), &out)
		if !errors.Is(err, ErrOptions) {
			t.Errorf("%s: %v, want ErrOptions", name, err)
		}
		if out.Len() > 0 {
			t.Errorf("%s: printed %q before refusing", name, out.String())
		}
	}

	var zero StoreOptions
	if err := zero.Check(); err != nil {
		t.Errorf("the zero StoreOptions: %v", err)
	}
	if got := zero.withDefaults(); got.Items != DefaultItems || got.Dims != DefaultDims || got.Duration != DefaultDuration || got.Concurrency != DefaultConcurrency {
		t.Errorf("StoreOptions defaults: %+v", got)
	}
	if got := (CheckpointerOptions{}).withDefaults(); got.Threads != DefaultThreads || got.ScaleBase != DefaultScaleBase {
		t.Errorf("CheckpointerOptions defaults: %+v", got)
	}
}

func storeRun(o StoreOptions) func(ctx context.Context, w *bytes.Buffer) error {
	return func(ctx context.Context, w *bytes.Buffer) error { return RunStore(ctx, w, o) }
}

func cpRun(o CheckpointerOptions) func(ctx context.Context, w *bytes.Buffer) error {
	return func(ctx context.Context, w *bytes.Buffer) error { return RunCheckpointer(ctx, w, o) }
}

// TestCheckpointerSQLiteClassic runs the classic operations on SQLite:
// every op at both concurrencies for raw SQL, the library's savers and
// the audited column (its trail in the data's file).
func TestCheckpointerSQLiteClassic(t *testing.T) {
	o := CheckpointerOptions{Options: Options{Backend: "sqlite", Duration: 300 * time.Millisecond, Concurrency: 2,
		Ops: []string{"put", "put_writes", "get_tuple", "list10"}, JSON: true}}
	out := runBench(t, cpRun(o))
	_, rows := benchRows(t, out)
	wantRows(t, rows, o.Ops, []string{"raw-sql", "plaintext", "encrypted", auditedMode}, 1, 2)
}
