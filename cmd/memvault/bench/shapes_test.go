package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/memvault/memvault/memvaulttest/pgtest"
)

// benchRows parses JSON output: the settings line, then rows.
func benchRows(t *testing.T, out string) (map[string]string, []Row) {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(out), "\n")
	var first struct {
		Cluster map[string]string `json:"cluster"`
	}
	if err := json.Unmarshal([]byte(lines[0]), &first); err != nil || len(first.Cluster) == 0 {
		t.Fatalf("first line %q is not the settings (%v)", lines[0], err)
	}
	var rows []Row
	for _, l := range lines[1:] {
		var r Row
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

func wantRows(t *testing.T, rows []Row, ops, modes []string, concs ...int) {
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

// shapeOptions are the tiny shapes of both workloads at once.
func shapeOptions(backend, dsn string) CheckpointerOptions {
	return CheckpointerOptions{Options: Options{DSN: dsn, Backend: backend, Duration: 300 * time.Millisecond, Concurrency: 2, JSON: true},
		Workload: "messages", Scale: 600, Threads: 30, ScaleBase: 100}
}

// TestShapesPostgres runs the growing-messages workload (with the JS
// column when node and the JS packages are there) and scale mode at tiny
// sizes on PostgreSQL. Scale mode checks by itself that a copied thread
// reads back as the template thread the saver wrote.
func TestShapesPostgres(t *testing.T) {
	o := shapeOptions("postgres", pgtest.SchemaDSN(t))
	modes := []string{"raw-pgx", "plaintext", "encrypted", auditedMode, groupedMode}
	if jsDir, ok := jsAvailable(t); ok {
		o.JSDir = jsDir
		modes = append(modes, jsMode)
	}
	settings, rows := benchRows(t, runBench(t, func(ctx context.Context, w *bytes.Buffer) error { return RunCheckpointer(ctx, w, o) }))
	if settings["fsync"] == "" {
		t.Errorf("settings %v lack fsync", settings)
	}
	wantRows(t, rows, []string{"put_messages", "get_messages_50", "get_messages_200"}, modes, 1, 2)
	wantRows(t, rows, []string{"get_tuple", "get_tuple_by_id", "list10", "put"},
		[]string{"raw-pgx@100", "plaintext@100", "raw-pgx@600", "plaintext@600"}, 1, 2)
}

// TestShapesSQLite runs both workloads at tiny sizes on a temporary SQLite
// file, with raw SQL on the same file (and the audited saver's trail in a
// file beside it).
func TestShapesSQLite(t *testing.T) {
	o := shapeOptions("sqlite", "")
	settings, rows := benchRows(t, runBench(t, func(ctx context.Context, w *bytes.Buffer) error { return RunCheckpointer(ctx, w, o) }))
	if settings["journal_mode"] != "wal" {
		t.Errorf("settings %v: journal_mode not wal", settings)
	}
	wantRows(t, rows, []string{"put_messages", "get_messages_50", "get_messages_200"}, []string{"raw-sql", "plaintext", "encrypted", auditedMode, groupedMode}, 1, 2)
	wantRows(t, rows, []string{"get_tuple", "get_tuple_by_id", "list10", "put"},
		[]string{"raw-sql@100", "plaintext@100", "raw-sql@600", "plaintext@600"}, 1, 2)
}
