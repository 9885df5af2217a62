package redissaver_test

import (
	"fmt"
	"testing"

	"github.com/memvault/memvault/backends/redis/redissaver"
	"github.com/memvault/memvault/backends/redis/redistest"
	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/checkpointer/checkpointertest"
	"github.com/memvault/memvault/memvaulttest/testkeys"
)

// TestConformanceCluster runs the suite on a three-master Redis Cluster
// of each version, through a ClusterClient: every thread's keys share a
// slot, so its scripts and MULTI blocks run on one node; the thread index
// lives on another.
func TestConformanceCluster(t *testing.T) {
	for _, v := range redistest.Versions {
		t.Run(fmt.Sprintf("redis%d", v), func(t *testing.T) {
			t.Parallel()
			c := redistest.StartCluster(t, v)
			for name, opt := range map[string]func(*testing.T) redissaver.Options{
				"plaintext": func(*testing.T) redissaver.Options { return redissaver.Options{} },
				"encrypted": func(t *testing.T) redissaver.Options { return redissaver.Options{Serde: testkeys.Encrypting(t)} },
			} {
				t.Run(name, func(t *testing.T) {
					t.Parallel()
					checkpointertest.Run(t, func(t *testing.T) checkpointer.Saver {
						o := opt(t)
						o.Prefix = redistest.Prefix()
						s, err := redissaver.New(c.Client(t), o)
						if err != nil {
							t.Fatal(err)
						}
						t.Cleanup(func() { _ = s.Close() })
						return s
					})
				})
			}
		})
	}
}
