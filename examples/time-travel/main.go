// Time-travel shows a thread's history and a fork from an earlier
// checkpoint. A travel agent booked the wrong city; we go back to the
// checkpoint before the booking, change the destination there and carry on.
// The new branch becomes the thread's latest state, and the original branch
// stays readable by its checkpoint ids.
//
// Run it from the repository root:
//
//	go run ./examples/time-travel
//
// It uses a SQLite file in a temporary directory; any checkpointer.Saver
// (PostgreSQL, in memory) works the same way.
package main

import (
	"context"
	"fmt"
	"log"
	"maps"
	"os"
	"path/filepath"
	"time"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/checkpointer/sqlitesaver"
)

func main() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "memvault-time-travel-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	saver, err := sqlitesaver.Open(ctx, filepath.Join(dir, "trips.db"), sqlitesaver.Options{})
	if err != nil {
		log.Fatalf("open: %v", err)
	}
	defer saver.Close()

	// The original run: three steps.
	thread := checkpointer.Config{ThreadID: "trip-7"}
	at := thread
	for _, s := range []struct {
		source string
		update map[string]any
	}{
		{"input", map[string]any{"request": "a quiet weekend by the sea"}},
		{"loop", map[string]any{"destination": "Lisbon", "nights": 2}},
		{"loop", map[string]any{"status": "booked"}},
	} {
		if at, err = advance(ctx, saver, at, s.source, s.update); err != nil {
			log.Fatal(err)
		}
	}
	original := at

	// The history, newest first. Pick the last checkpoint before the booking.
	fmt.Println("history of trip-7:")
	var beforeBooking *checkpointer.Tuple
	for tup, err := range saver.List(ctx, &thread, checkpointer.ListOptions{}) {
		if err != nil {
			log.Fatalf("history: %v", err)
		}
		fmt.Printf("  step %2d  %s  %s\n", stepOf(tup), tup.Config.CheckpointID, state(tup))
		if beforeBooking == nil && tup.Checkpoint.ChannelValues["status"] == nil {
			beforeBooking = tup
		}
	}

	// Fork: write a changed state on top of that checkpoint (LangGraph's
	// update_state, source "update"), then let the run go on from there.
	fmt.Printf("forking from step %d (%s)\n", stepOf(beforeBooking), beforeBooking.Config.CheckpointID)
	fork, err := advance(ctx, saver, beforeBooking.Config, "update", map[string]any{"destination": "Porto", "nights": 3})
	if err != nil {
		log.Fatal(err)
	}
	if _, err = advance(ctx, saver, fork, "loop", map[string]any{"status": "booked"}); err != nil {
		log.Fatal(err)
	}

	// Both branches: the thread's latest checkpoint is the fork's end; the
	// original end is still there, reached by its id.
	printBranch(ctx, saver, "latest (the fork)", thread)
	printBranch(ctx, saver, "original branch  ", original)
}

// advance loads the checkpoint at names (the thread's latest when it has no
// checkpoint id), applies updates to its channels and saves the result as a
// new checkpoint whose parent is the loaded one, as a graph runtime does
// after each step. It returns the new checkpoint's config.
func advance(ctx context.Context, s checkpointer.Saver, at checkpointer.Config, source string, updates map[string]any) (checkpointer.Config, error) {
	cp := &checkpointer.Checkpoint{V: 4, ChannelValues: map[string]any{}, ChannelVersions: map[string]string{}}
	step := -1 // the input checkpoint
	parent, err := s.GetTuple(ctx, at)
	if err != nil {
		return at, fmt.Errorf("load %s: %w", at.CheckpointID, err)
	}
	if parent != nil {
		at = parent.Config
		maps.Copy(cp.ChannelValues, parent.Checkpoint.ChannelValues)
		maps.Copy(cp.ChannelVersions, parent.Checkpoint.ChannelVersions)
		step = stepOf(parent) + 1
	}
	changed := map[string]string{}
	for ch, v := range updates {
		cp.ChannelValues[ch] = v
		cp.ChannelVersions[ch] = s.NextVersion(cp.ChannelVersions[ch])
		changed[ch] = cp.ChannelVersions[ch]
	}
	cp.ID, cp.TS = checkpointer.NewID(step), time.Now().UTC()
	next, err := s.Put(ctx, at, cp, checkpointer.Metadata{"source": source, "step": step}, changed)
	if err != nil {
		return at, fmt.Errorf("save step %d: %w", step, err)
	}
	return next, nil
}

// printBranch prints the checkpoint at names and its ancestors, oldest first.
func printBranch(ctx context.Context, s checkpointer.Saver, name string, at checkpointer.Config) {
	var chain []*checkpointer.Tuple
	for cfg := &at; cfg != nil; {
		tup, err := s.GetTuple(ctx, *cfg)
		if err != nil || tup == nil {
			log.Fatalf("load %s: %v", cfg.CheckpointID, err)
		}
		chain = append([]*checkpointer.Tuple{tup}, chain...)
		cfg = tup.ParentConfig
	}
	fmt.Printf("%s: %s\n", name, state(chain[len(chain)-1]))
	for _, tup := range chain {
		fmt.Printf("    step %2d  %-6s  %s\n", stepOf(tup), tup.Metadata["source"], tup.Config.CheckpointID)
	}
}

// state describes the trip a checkpoint holds.
func state(tup *checkpointer.Tuple) string {
	v := tup.Checkpoint.ChannelValues
	if v["destination"] == nil {
		return "planning"
	}
	s := fmt.Sprintf("%v, %v nights", v["destination"], v["nights"])
	if v["status"] != nil {
		s += fmt.Sprintf(", %v", v["status"])
	}
	return s
}

// stepOf is the step number stored in a checkpoint's metadata.
func stepOf(tup *checkpointer.Tuple) int {
	n, _ := tup.Metadata["step"].(int64) // metadata is JSON; integers decode as int64
	return int(n)
}
