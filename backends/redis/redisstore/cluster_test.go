package redisstore_test

import (
	"fmt"
	"testing"

	"github.com/memvault/memvault/backends/redis/redisstore"
	"github.com/memvault/memvault/backends/redis/redistest"
	"github.com/memvault/memvault/memvaulttest/testkeys"
	"github.com/memvault/memvault/serde"
	"github.com/memvault/memvault/store"
	"github.com/memvault/memvault/store/storetest"
)

// TestConformanceCluster runs the suite on a three-master Redis Cluster of
// each version through a ClusterClient: a store's keys share one hash tag,
// so its scripts run on the master of that slot, and prefix searches and
// namespace listing need no fan-out. Stores with different prefixes land
// on different masters.
func TestConformanceCluster(t *testing.T) {
	for _, v := range redistest.Versions {
		t.Run(fmt.Sprintf("redis%d", v), func(t *testing.T) {
			t.Parallel()
			c := redistest.StartCluster(t, v)
			for _, enc := range []string{"plaintext", "encrypted"} {
				t.Run(enc, func(t *testing.T) {
					t.Parallel()
					storetest.Run(t, func(t *testing.T, cfg storetest.Config) store.Store {
						var sd serde.Serializer
						if enc == "encrypted" {
							sd = testkeys.Encrypting(t)
						}
						s := newStore(t, c.Client(t), redisstore.Options{Index: cfg.Index, TTL: cfg.TTL, Now: cfg.Now, Serde: sd})
						if cfg.Index != nil && (cfg.Index.Distance == "" || cfg.Index.Distance == store.Cosine) && s.VectorSets() != (v >= 8) {
							t.Fatalf("VectorSets() = %v on Redis %d", s.VectorSets(), v)
						}
						return s
					})
				})
			}
		})
	}
}
