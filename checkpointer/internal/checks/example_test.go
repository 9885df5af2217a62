package checks_test

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/checkpointer/internal/checks"
)

// A driver's core checks a call's arguments before any I/O, so that bad
// input fails the same way on every backend. Reads check ids as text only;
// writes also bound their length.
func Example() {
	long := strings.Repeat("t", checkpointer.MaxIDBytes+1)

	// Reads: a missing thread id is refused, a long one may find an old row.
	fmt.Println(errors.Is(checks.ValidateConfig(checkpointer.Config{}), checkpointer.ErrMissingThreadID))
	fmt.Println(checks.ValidateConfig(checkpointer.Config{ThreadID: long}))
	// Listing every thread must be asked for: an unset thread id is refused.
	fmt.Println(errors.Is(checks.ValidateListConfig(&checkpointer.Config{}, checkpointer.ListOptions{}), checkpointer.ErrMissingThreadID))

	// Writes: the same long id is refused, as is a NUL byte anywhere.
	cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(0), TS: time.Now(),
		ChannelValues: map[string]any{"x": 1}, ChannelVersions: map[string]string{"x": "1"}}
	fmt.Println(checks.ValidatePut(checkpointer.Config{ThreadID: "t1"}, cp, cp.ChannelVersions))
	fmt.Println(errors.Is(checks.ValidatePut(checkpointer.Config{ThreadID: long}, cp, nil), checkpointer.ErrIDTooLong))
	err := checks.ValidatePutWrites(checkpointer.Config{ThreadID: "t1", CheckpointID: cp.ID},
		[]checkpointer.Write{{Channel: "a\x00b", Value: 1}}, "task-1", "")
	fmt.Println(errors.Is(err, checkpointer.ErrInvalidID))
	// Output:
	// true
	// <nil>
	// true
	// <nil>
	// true
	// true
}
