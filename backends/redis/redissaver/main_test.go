package redissaver_test

import (
	"testing"

	"github.com/memvault/memvault/backends/redis/redissaver"
	"github.com/memvault/memvault/backends/redis/redistest"
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
