package sqlitesaver

import (
	"context"
	"math"
	"path/filepath"
	"testing"
	"time"

	"github.com/memvault/memvault/checkpointer"
)

// TestReviewS27bMetadataNegativeZeroStored: the JSON model has one zero
// (de4e2b9), and PostgreSQL's jsonb stores metadata's -0.0 as 0; SQLite
// must store the same, not only read it back as 0.0 (a Python
// SqliteSaver, or a filter evaluated in SQL on the text, sees what is
// stored).
// Before the fix: metadata column {"source":"loop","step":1,"x":-0.0}.
func TestReviewS27bMetadataNegativeZeroStored(t *testing.T) {
	ctx := context.Background()
	s := openSaver(t, filepath.Join(t.TempDir(), "z.db"), Options{})
	cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(0), TS: time.Now().UTC(), ChannelValues: map[string]any{},
		ChannelVersions: map[string]string{}, VersionsSeen: map[string]map[string]string{}}
	md := checkpointer.Metadata{"source": "loop", "step": 1, "x": math.Copysign(0, -1)}
	if _, err := s.Put(ctx, checkpointer.Config{ThreadID: "t"}, cp, md, nil); err != nil {
		t.Fatal(err)
	}
	var stored string
	if err := s.d.db.Writer().QueryRow(`SELECT metadata FROM checkpoints WHERE thread_id = 't'`).Scan(&stored); err != nil {
		t.Fatal(err)
	}
	if want := `{"source":"loop","step":1,"x":0.0}`; stored != want {
		t.Errorf("metadata column %s, want %s (one zero, as jsonb stores it)", stored, want)
	}
}
