package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/memvault/memvault/memvaulttest/pgtest"
)

// TestBenchCitus runs `memvault bench checkpointer` and `bench store` (the
// classic rows) against a Citus coordinator with two workers, beside a
// plain PostgreSQL in the same run: the bench's own tables get distributed
// by the savers' and stores' Setup, and its raw-SQL baseline must run on
// them too. MEMVAULT_BENCH_CITUS_DURATION (a Go duration) sets the time
// per row, for figures (default 100ms: a check that every row runs);
// the tables are printed with -v.
func TestBenchCitus(t *testing.T) {
	d := 100 * time.Millisecond
	if v := os.Getenv("MEMVAULT_BENCH_CITUS_DURATION"); v != "" {
		var err error
		if d, err = time.ParseDuration(v); err != nil {
			t.Fatal(err)
		}
	}
	citus := pgtest.CitusDSN(t)
	plain := pgtest.DSN(t)
	ctx := context.Background()
	for _, db := range []struct{ name, dsn string }{{"postgres", plain}, {"citus", citus}} {
		var cp, st bytes.Buffer
		err := RunCheckpointer(ctx, &cp, CheckpointerOptions{Options: Options{DSN: db.dsn, Duration: d, Concurrency: 16, JSON: true}})
		if err != nil {
			t.Fatalf("bench checkpointer on %s: %v", db.name, err)
		}
		err = RunStore(ctx, &st, StoreOptions{Options: Options{DSN: db.dsn, Duration: d, Concurrency: 16, JSON: true}, Items: 2000})
		if err != nil {
			t.Fatalf("bench store on %s: %v", db.name, err)
		}
		for suite, out := range map[string]string{"checkpointer": cp.String(), "store": st.String()} {
			lines := strings.Split(strings.TrimSpace(out), "\n")
			// The header says which: a Citus coordinator with 2 workers.
			var head struct{ Cluster map[string]string }
			if err := json.Unmarshal([]byte(lines[0]), &head); err != nil {
				t.Fatalf("%s %s header %q: %v", db.name, suite, lines[0], err)
			}
			if got, want := head.Cluster["citus_workers"], map[string]string{"citus": "2", "postgres": ""}[db.name]; got != want {
				t.Errorf("%s %s header %v: citus_workers %q, want %q", db.name, suite, head.Cluster, got, want)
			}
			rows := 0
			for _, l := range lines[1:] {
				var r Row
				if err := json.Unmarshal([]byte(l), &r); err != nil || r.OpsPerS <= 0 {
					t.Fatalf("%s %s row %q: %v", db.name, suite, l, err)
				}
				rows++
				t.Logf("%-8s %-12s %-16s %-16s c=%-2d %8.0f ops/s p50 %7.3f ms p99 %7.3f ms", db.name, r.Suite, r.Op, r.Mode, r.Concurrency, r.OpsPerS, r.P50ms, r.P99ms)
			}
			if rows == 0 {
				t.Errorf("%s %s: no rows:\n%s", db.name, suite, out)
			}
		}
	}
}
