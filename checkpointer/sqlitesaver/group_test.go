package sqlitesaver_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/checkpointer/checkpointertest"
	"github.com/memvault/memvault/checkpointer/sqlitesaver"
	"github.com/memvault/memvault/memvaulttest/testkeys"
	"github.com/memvault/memvault/serde"
)

func openGrouped(t *testing.T, ser serde.Serializer) *sqlitesaver.Saver {
	t.Helper()
	s, err := sqlitesaver.Open(context.Background(), filepath.Join(t.TempDir(), "cp.db"), sqlitesaver.Options{Serde: ser, GroupCommit: 64})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// TestConformanceGroupCommit runs the suite on a saver with group commit
// on, plain and with per-subject keys (whose fence each write checks).
func TestConformanceGroupCommit(t *testing.T) {
	t.Run("Plain", func(t *testing.T) {
		checkpointertest.Run(t, func(t *testing.T) checkpointer.Saver { return openGrouped(t, nil) })
	})
	t.Run("Subjects", func(t *testing.T) {
		checkpointertest.Run(t, func(t *testing.T) checkpointer.Saver { return openGrouped(t, testkeys.Subjects(t)) })
	})
}

// TestConformanceWriteGroup runs the suite with every write stored by the
// driver's WriteGroup (a group of one), as the writes of a group are.
func TestConformanceWriteGroup(t *testing.T) {
	for name, ser := range map[string]func(t *testing.T) serde.Serializer{
		"Plain":    func(*testing.T) serde.Serializer { return nil },
		"Subjects": func(t *testing.T) serde.Serializer { return testkeys.Subjects(t) },
	} {
		t.Run(name, func(t *testing.T) {
			checkpointertest.Run(t, func(t *testing.T) checkpointer.Saver {
				e, err := sqlitesaver.EveryWriteGrouped(openGrouped(t, ser(t)))
				if err != nil {
					t.Fatal(err)
				}
				return e
			})
		})
	}
}
