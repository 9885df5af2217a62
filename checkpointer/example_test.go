package checkpointer_test

import (
	"fmt"

	"github.com/memvault/memvault/checkpointer"
)

// Checkpoint ids sort by creation time and carry the step; versions compare
// by their integer part; metadata filters use JSONB containment.
func Example() {
	first, second := checkpointer.NewID(-1), checkpointer.NewID(0)
	fmt.Println(first < second, first[19:23], second[19:23])

	v := checkpointer.NextVersion("")
	n, _ := checkpointer.VersionNumber(checkpointer.NextVersion(v))
	fmt.Println(len(v) >= 49, v[:33], n)
	fmt.Println(checkpointer.NextVersionStyle(checkpointer.VersionInt, "41"))

	md := checkpointer.SerializableMetadata(
		checkpointer.Config{ThreadID: "t1", Extra: map[string]any{"user_id": "ann"}},
		checkpointer.Metadata{"source": "loop", "step": 3, "parents": map[string]any{"": "p1", "sub": "p2"}},
	)
	fmt.Println(md["user_id"], md["thread_id"])
	fmt.Println(checkpointer.MetadataContains(md, map[string]any{"parents": map[string]any{"sub": "p2"}, "step": 3.0}))
	fmt.Println(checkpointer.MetadataContains(md, map[string]any{"source": "input"}))
	// Output:
	// true bfff 8000
	// true 00000000000000000000000000000001. 2
	// 42
	// ann <nil>
	// true
	// false
}
