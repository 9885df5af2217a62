package mongosaver_test

import (
	"testing"

	"github.com/memvault/memvault/backends/mongodb/mongosaver"
	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/checkpointer/checkpointertest"
	"github.com/memvault/memvault/memvaulttest/testkeys"
)

// The suites run in parallel, each on databases of its own: most of
// their time is spent waiting on the server, one at a time would take
// several minutes under -race.

func TestConformance(t *testing.T) {
	t.Parallel()
	checkpointertest.Run(t, func(t *testing.T) checkpointer.Saver {
		return newSaver(t, mongosaver.Options{})
	})
}

func TestConformanceEncrypted(t *testing.T) {
	t.Parallel()
	checkpointertest.Run(t, func(t *testing.T) checkpointer.Saver {
		return newSaver(t, mongosaver.Options{Serde: testkeys.Encrypting(t)})
	})
}

// TestConformanceSubjects runs the suite with per-subject keys.
func TestConformanceSubjects(t *testing.T) {
	t.Parallel()
	checkpointertest.Run(t, func(t *testing.T) checkpointer.Saver {
		return newSaver(t, mongosaver.Options{Serde: testkeys.Subjects(t)})
	})
}
