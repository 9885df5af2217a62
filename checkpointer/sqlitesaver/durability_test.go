package sqlitesaver

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/memvaulttest/childproc"
)

// TestDurabilityChild is the child process of TestDurability: it puts
// checkpoints (with a value and a pending write each) until it is killed,
// printing each checkpoint id after its Put returned.
func TestDurabilityChild(t *testing.T) {
	var path string
	if !childproc.Arg(t, &path) {
		t.Skip("child process of TestDurability")
	}
	ctx := context.Background()
	s, err := Open(ctx, path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	cfg := checkpointer.Config{ThreadID: "durable"}
	ver := ""
	payload := strings.Repeat("x", 4096)
	for step := 0; ; step++ {
		ver = s.NextVersion(ver)
		cp := &checkpointer.Checkpoint{
			V: 4, ID: checkpointer.NewID(step), TS: time.Now().UTC(),
			ChannelValues:   map[string]any{"state": map[string]any{"step": step, "pad": payload}},
			ChannelVersions: map[string]string{"state": ver},
		}
		next, err := s.Put(ctx, cfg, cp, checkpointer.Metadata{"step": step}, map[string]string{"state": ver})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.PutWrites(ctx, next, []checkpointer.Write{{Channel: "out", Value: step}}, "task", ""); err != nil {
			t.Fatal(err)
		}
		// The id reaches the parent only after Put returned.
		childproc.Say("%s", next.CheckpointID)
		cfg = next
	}
}

// TestDurability kills (SIGKILL) a process in the middle of a stream of
// puts and checks that the database opens cleanly, passes an integrity
// check and holds every checkpoint whose Put had returned.
func TestDurability(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns a child process")
	}
	for round := range 3 {
		t.Run(fmt.Sprint(round), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "durable.db")
			child := childproc.Start(t, "TestDurabilityChild", path)
			killAt := 200 + rand.IntN(200)
			var ids, other []string
			killed := false
			for line := range child.Lines {
				if _, ok := checkpointer.IDTime(line); !ok {
					other = append(other, line) // test framework output
					continue
				}
				ids = append(ids, line)
				if len(ids) == killAt && !killed {
					child.Kill() // the lines it wrote before it died stay in Lines
					killed = true
				}
			}
			if !killed {
				t.Fatalf("child exited after %d puts before it was killed: %s", len(ids), strings.Join(other, "\n"))
			}

			s := openSaver(t, path, Options{})
			var integrity string
			if err := s.d.db.Reader().QueryRow(`PRAGMA integrity_check`).Scan(&integrity); err != nil || integrity != "ok" {
				t.Fatalf("integrity_check = %q, %v", integrity, err)
			}
			ctx := context.Background()
			for i, id := range ids {
				tp, err := s.GetTuple(ctx, checkpointer.Config{ThreadID: "durable", CheckpointID: id})
				if err != nil {
					t.Fatalf("checkpoint %d (%s): %v", i, id, err)
				}
				if tp == nil {
					t.Fatalf("checkpoint %d (%s) printed after Put returned is missing", i, id)
				}
				st, _ := tp.Checkpoint.ChannelValues["state"].(map[string]any)
				if st == nil || fmt.Sprint(st["step"]) != fmt.Sprint(i) || len(tp.PendingWrites) != 1 {
					t.Fatalf("checkpoint %d: state %v, writes %v", i, tp.Checkpoint.ChannelValues, tp.PendingWrites)
				}
			}
			// The database still takes writes.
			put(t, s, checkpointer.Config{ThreadID: "after"}, 0, "ok")
			t.Logf("killed after %d acknowledged puts", len(ids))
		})
	}
}
