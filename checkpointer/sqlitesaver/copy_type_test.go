package sqlitesaver

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/memvault/memvault/checkpointer"
)

// TestCopyThreadKeepsCheckpointType: CopyThread copies every column of a
// checkpoint row, the type column included, as it did before the driver
// seam.
func TestCopyThreadKeepsCheckpointType(t *testing.T) {
	ctx := context.Background()
	s := openSaver(t, filepath.Join(t.TempDir(), "c.db"), Options{})
	cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(0), TS: time.Now().UTC(), ChannelValues: map[string]any{"a": "x"},
		ChannelVersions: map[string]string{"a": "1"}, VersionsSeen: map[string]map[string]string{}}
	if _, err := s.Put(ctx, checkpointer.Config{ThreadID: "src"}, cp, nil, map[string]string{"a": "1"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.d.db.Writer().Exec(`UPDATE checkpoints SET type = 'msgpack' WHERE thread_id = 'src'`); err != nil {
		t.Fatal(err)
	}
	if err := s.CopyThread(ctx, "src", "dst"); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := s.d.db.Writer().QueryRow(`SELECT count(*) FROM checkpoints WHERE thread_id = 'dst' AND type IS 'msgpack'`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 1 {
		t.Fatalf("copied checkpoints with the source's type: %d, want 1", n)
	}
}
