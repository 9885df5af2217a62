package sqlitesaver

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/checkpointer/checkpointertest"
)

// TestResumeDuringBackgroundSweep races agents resuming idle threads
// against the saver's own background sweeper (Options.Retention, as
// MEMVAULT_RETENTION_* sets it through config), a sweep every
// 10 ms: every acknowledged checkpoint reads every value, every
// refused put failed with checkpointer.ErrParentMissing.
func TestResumeDuringBackgroundSweep(t *testing.T) {
	s := openSaver(t, filepath.Join(t.TempDir(), "bg.db"), Options{
		Retention:     checkpointer.RetentionPolicy{IdleTTL: 24 * time.Hour, KeepLatest: 2},
		SweepInterval: 10 * time.Millisecond,
	})
	checkpointertest.ResumeDuringSweep(t, s, nil)
}
