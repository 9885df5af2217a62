package checkpointer_test

import (
	"fmt"

	"github.com/memvault/memvault/checkpointer"
)

// Checkpoint ids sort by creation time as text and carry the step; a config
// names a thread, a namespace and (for time travel) one checkpoint.
func Example() {
	first, second := checkpointer.NewID(-1), checkpointer.NewID(0)
	fmt.Println(first < second, first[19:23], second[19:23])

	cfg := checkpointer.Config{ThreadID: "support-42", CheckpointID: second}
	fmt.Println(checkpointer.ValidateThreadID(cfg.ThreadID))
	fmt.Println(checkpointer.ValidateThreadID("") == checkpointer.ErrMissingThreadID)
	// Output:
	// true bfff 8000
	// <nil>
	// true
}
