package memsaver_test

import (
	"fmt"
	"testing"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/checkpointer/memsaver"
)

// TestRowThreadIDsPages: engine.Saver.RowThreadIDs reads the driver's
// RowThreads a page at a time; threads holding only pending writes, more
// than a page of them, come back all, ascending, once each.
func TestRowThreadIDsPages(t *testing.T) {
	sv, err := memsaver.New(memsaver.Options{})
	if err != nil {
		t.Fatal(err)
	}
	const n = 2345
	for i := range n {
		cfg := checkpointer.Config{ThreadID: fmt.Sprintf("t%05d", i), CheckpointID: checkpointer.NewID(0)}
		if err := sv.PutWrites(t.Context(), cfg, []checkpointer.Write{{Channel: "ch", Value: i}}, "task", ""); err != nil {
			t.Fatal(err)
		}
	}
	i := 0
	for id, err := range sv.RowThreadIDs(t.Context()) {
		if err != nil {
			t.Fatal(err)
		}
		if want := fmt.Sprintf("t%05d", i); id != want {
			t.Fatalf("RowThreadIDs #%d = %q, want %q", i, id, want)
		}
		i++
	}
	if i != n {
		t.Fatalf("RowThreadIDs listed %d threads, want %d", i, n)
	}
}
