package sqlitesaver

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memvault/memvault/checkpointer"
)

// childEnv names the database a re-executed test binary writes to in
// TestDurabilityChild.
const childEnv = "MEMVAULT_SQLITE_DURABILITY_DB"

// TestDurabilityChild is the child process of TestDurability: it puts
// checkpoints (with a value and a pending write each) until it is killed,
// printing each checkpoint id after its Put returned.
func TestDurabilityChild(t *testing.T) {
	path := os.Getenv(childEnv)
	if path == "" {
		t.Skip("child process of TestDurability")
	}
	ctx := context.Background()
	s, err := Open(ctx, path, Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, "open:", err)
		os.Exit(2)
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
			fmt.Fprintln(os.Stderr, "put:", err)
			os.Exit(2)
		}
		if err := s.PutWrites(ctx, next, []checkpointer.Write{{Channel: "out", Value: step}}, "task", ""); err != nil {
			fmt.Fprintln(os.Stderr, "put writes:", err)
			os.Exit(2)
		}
		// Unbuffered: the id reaches the pipe only after Put returned.
		fmt.Fprintln(os.Stdout, next.CheckpointID)
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
			cmd := exec.Command(os.Args[0], "-test.run=^TestDurabilityChild$", "-test.count=1")
			cmd.Env = append(os.Environ(), childEnv+"="+path)
			var stderr strings.Builder
			cmd.Stderr = &stderr
			out, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			killAt := 200 + rand.IntN(200)
			var ids []string
			sc := bufio.NewScanner(out)
			killed := false
			for sc.Scan() {
				line := sc.Text()
				if _, ok := checkpointer.IDTime(line); !ok {
					continue // test framework output
				}
				ids = append(ids, line)
				if len(ids) == killAt && !killed {
					if err := cmd.Process.Kill(); err != nil {
						t.Fatal(err)
					}
					killed = true
				}
			}
			_ = cmd.Wait()
			if !killed {
				t.Fatalf("child exited after %d puts before it was killed: %s", len(ids), stderr.String())
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
