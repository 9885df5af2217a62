package redissaver_test

import (
	"testing"
	"time"

	"github.com/memvault/memvault/backends/redis/redissaver"
	"github.com/memvault/memvault/backends/redis/redistest"
	"github.com/memvault/memvault/checkpointer"
)

func TestMain(m *testing.M) { redistest.Main(m) }

// newSaver returns a Saver under a prefix of its own on the shared
// server of Redis v.
func newSaver(t testing.TB, v int, opt redissaver.Options) *redissaver.Saver {
	t.Helper()
	srv := redistest.Shared(t, v)
	opt.Prefix = redistest.Prefix()
	s, err := redissaver.New(srv.Client(t), opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// newCheckpoint is a checkpoint of step n with one channel value.
func newCheckpoint(s *redissaver.Saver, n int) *checkpointer.Checkpoint {
	v := s.NextVersion("")
	for range n {
		v = s.NextVersion(v)
	}
	return &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(n), TS: time.Now(),
		ChannelValues:   map[string]any{"step": float64(n)},
		ChannelVersions: map[string]string{"step": v}}
}
