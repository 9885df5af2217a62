package checkpointertest_test

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/memvault/memvault/checkpointer/checkpointertest"
)

// Values read back through a serializer are compared under the suite's
// value model.
func ExampleEqual() {
	at := time.Date(2024, 5, 4, 6, 32, 42, 0, time.UTC)
	stored := map[string]any{"n": 3, "tags": []string{"a"}, "at": at}
	loaded := map[string]any{"n": json.Number("3"), "tags": []any{"a"}, "at": "2024-05-04T06:32:42Z"}
	fmt.Println(checkpointertest.Equal(stored, loaded))
	fmt.Println(checkpointertest.Equal(1, 1.5))
	// Output:
	// true
	// false
}
