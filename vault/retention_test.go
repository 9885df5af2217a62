package vault

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memvault/memvault/audit"
	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/config"
)

// TestRetentionThroughConfig: the MEMVAULT_RETENTION_* variables reach the
// saver, whose background sweeper deletes an idle thread by itself and
// stops when the handle is closed.
func TestRetentionThroughConfig(t *testing.T) {
	ctx := t.Context()
	c, err := config.FromLookup(lookup(map[string]string{
		"MEMVAULT_DB":                       filepath.Join(t.TempDir(), "ret.db"),
		"MEMVAULT_EMBEDDINGS":               "none",
		"MEMVAULT_RETENTION_IDLE_TTL":       "24h",
		"MEMVAULT_RETENTION_KEEP_LATEST":    "3",
		"MEMVAULT_RETENTION_SWEEP_INTERVAL": "10ms",
	}))
	if err != nil {
		t.Fatal(err)
	}
	if want := (checkpointer.RetentionPolicy{IdleTTL: 24 * time.Hour, KeepLatest: 3}); c.Retention != want || c.RetentionSweepInterval != 10*time.Millisecond {
		t.Fatalf("Retention = %+v every %v", c.Retention, c.RetentionSweepInterval)
	}
	h, err := Open(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if _, ok := h.Saver.(checkpointer.Sweeper); !ok {
		t.Fatalf("%T is not a checkpointer.Sweeper", h.Saver)
	}
	old := checkpointer.IDFloor(time.Now().Add(-48 * time.Hour))[:19] + "8000-000000000001"
	cfg := checkpointer.Config{ThreadID: "idle-thread"}
	if _, err := h.Saver.Put(ctx, cfg, &checkpointer.Checkpoint{V: 4, ID: old, TS: time.Now().UTC(),
		ChannelValues: map[string]any{}, ChannelVersions: map[string]string{}}, checkpointer.Metadata{}, nil); err != nil {
		t.Fatal(err)
	}
	// Wait for the sweeper (no deadline of its own: the test binary's
	// timeout bounds it).
	for {
		tp, err := h.Saver.GetTuple(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if tp == nil {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestRetentionConfigErrors(t *testing.T) {
	for name, v := range map[string]string{
		"MEMVAULT_RETENTION_IDLE_TTL":       "-1h",
		"MEMVAULT_RETENTION_KEEP_LATEST":    "-2",
		"MEMVAULT_RETENTION_SWEEP_INTERVAL": "0",
	} {
		if _, err := config.FromLookup(lookup(map[string]string{name: v})); err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("%s=%q: error %v, want one naming the variable", name, v, err)
		}
	}
	for _, v := range []string{"soon", "1.5"} {
		if _, err := config.FromLookup(lookup(map[string]string{"MEMVAULT_RETENTION_KEEP_LATEST": v, "MEMVAULT_RETENTION_IDLE_TTL": "1h"})); err == nil {
			t.Errorf("MEMVAULT_RETENTION_KEEP_LATEST=%q accepted", v)
		}
	}
	c, err := config.FromLookup(lookup(map[string]string{"MEMVAULT_RETENTION_SWEEP_INTERVAL": "off"}))
	if err != nil || c.RetentionSweepInterval >= 0 || !c.Retention.Empty() {
		t.Fatalf("off: %+v every %v, %v", c.Retention, c.RetentionSweepInterval, err)
	}
}

// TestSweepProgress: SweepOptions.Progress is called after each batch with
// the report so far, and its last call is the sweep's report.
func TestSweepProgress(t *testing.T) {
	ctx := t.Context()
	c, err := config.FromLookup(lookup(map[string]string{
		"MEMVAULT_DB":         filepath.Join(t.TempDir(), "progress.db"),
		"MEMVAULT_EMBEDDINGS": "none",
	}))
	if err != nil {
		t.Fatal(err)
	}
	h, err := Open(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	idle := checkpointer.IDFloor(time.Now().Add(-48 * time.Hour))[:19] + "8000-000000000001"
	for i, th := range []string{"a", "b", "c", "d", "e"} {
		id := idle
		if i%2 == 1 { // b and d stay
			id = checkpointer.IDFloor(time.Now())[:19] + "8000-000000000001"
		}
		if _, err := h.Saver.Put(ctx, checkpointer.Config{ThreadID: th}, &checkpointer.Checkpoint{V: 4, ID: id, TS: time.Now().UTC(),
			ChannelValues: map[string]any{}, ChannelVersions: map[string]string{}}, checkpointer.Metadata{}, nil); err != nil {
			t.Fatal(err)
		}
	}
	var seen []checkpointer.SweepReport
	rep, err := h.Saver.(checkpointer.Sweeper).Sweep(ctx, checkpointer.RetentionPolicy{IdleTTL: 24 * time.Hour},
		checkpointer.SweepOptions{BatchThreads: 2, Progress: func(r checkpointer.SweepReport) { seen = append(seen, r) }})
	if err != nil {
		t.Fatal(err)
	}
	var scanned []int64
	for _, r := range seen {
		scanned = append(scanned, r.ThreadsScanned)
	}
	if len(seen) != 3 || scanned[0] != 2 || scanned[1] != 4 || scanned[2] != 5 || seen[2] != rep || rep.ThreadsDeleted != 3 {
		t.Fatalf("progress %+v (scanned %v), report %+v", seen, scanned, rep)
	}
}

// TestBackgroundSweepAudited: with the audit trail on, the background
// retention sweeper's deletions are recorded like `threads sweep`'s — a
// "retention:" thread.delete record before the sweep deletes — never
// done unaudited by the inner saver.
func TestBackgroundSweepAudited(t *testing.T) {
	ctx := t.Context()
	c, err := config.FromLookup(lookup(map[string]string{
		"MEMVAULT_DB":                       filepath.Join(t.TempDir(), "ret.db"),
		"MEMVAULT_EMBEDDINGS":               "none",
		"LANGGRAPH_AES_KEY":                 "0123456789abcdef0123456789abcdef",
		"MEMVAULT_AUDIT":                    "true",
		"MEMVAULT_RETENTION_IDLE_TTL":       "24h",
		"MEMVAULT_RETENTION_SWEEP_INTERVAL": "10ms",
	}))
	if err != nil {
		t.Fatal(err)
	}
	h, err := Open(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	old := checkpointer.IDFloor(time.Now().Add(-48 * time.Hour))[:19] + "8000-000000000001"
	cfg := checkpointer.Config{ThreadID: "idle-thread"}
	if _, err := h.Saver.Put(ctx, cfg, &checkpointer.Checkpoint{V: 4, ID: old, TS: time.Now().UTC(),
		ChannelValues: map[string]any{}, ChannelVersions: map[string]string{}}, checkpointer.Metadata{}, nil); err != nil {
		t.Fatal(err)
	}
	for { // the sweeper deletes it (the test binary's timeout bounds the wait)
		tp, err := h.Saver.GetTuple(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if tp == nil {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	var sweeps int
	if err := h.Audit.Records(ctx, audit.Filter{}, func(r audit.Record) error {
		if r.Op == audit.OpThreadDelete && strings.HasPrefix(r.Target, "retention:") {
			sweeps++
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if sweeps == 0 {
		t.Fatal("the background sweeper deleted a thread and the trail holds no retention record")
	}
	if _, err := h.Audit.Verify(ctx); err != nil {
		t.Fatal(err)
	}
}
