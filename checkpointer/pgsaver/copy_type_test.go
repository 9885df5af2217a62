package pgsaver_test

import (
	"context"
	"testing"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/checkpointer/pgsaver"
)

// TestCopyThreadKeepsCheckpointType: CopyThread copies every column of a
// checkpoint row, the type column (which another LangGraph writer may
// set) included, as it did before the driver seam.
func TestCopyThreadKeepsCheckpointType(t *testing.T) {
	ctx := context.Background()
	s, pool := newSaver(t, pgsaver.Options{})
	cp, nv := step(1, nil, map[string]any{"a": "x"})
	if _, err := s.Put(ctx, checkpointer.Config{ThreadID: "src"}, cp, nil, nv); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `UPDATE checkpoints SET type = 'msgpack' WHERE thread_id = 'src'`); err != nil {
		t.Fatal(err)
	}
	if err := s.CopyThread(ctx, "src", "dst"); err != nil {
		t.Fatal(err)
	}
	if n := count(t, pool, `SELECT count(*) FROM checkpoints WHERE thread_id = 'dst' AND type IS NOT DISTINCT FROM 'msgpack'`); n != 1 {
		t.Fatalf("copied checkpoints with the source's type: %d, want 1", n)
	}
}
