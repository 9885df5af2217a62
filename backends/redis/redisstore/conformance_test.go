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

// TestConformance runs the store suite on every server version,
// plaintext and encrypted: on Redis 8 searches rank through the vector
// set, on Redis 7 (and on Redis 8 with NoVectorSets) by exact scan.
func TestConformance(t *testing.T) {
	for _, v := range redistest.Versions {
		modes := map[string]bool{"exact": true}
		if v >= 8 {
			modes["vectorsets"] = false
		}
		for mode, noVS := range modes {
			for _, enc := range []string{"plaintext", "encrypted"} {
				t.Run(fmt.Sprintf("redis%d/%s/%s", v, mode, enc), func(t *testing.T) {
					t.Parallel()
					srv := redistest.Shared(t, v)
					storetest.Run(t, func(t *testing.T, cfg storetest.Config) store.Store {
						var sd serde.Serializer
						if enc == "encrypted" {
							sd = testkeys.Encrypting(t)
						}
						s := newStore(t, srv.Client(t), redisstore.Options{Index: cfg.Index, TTL: cfg.TTL, Now: cfg.Now, Serde: sd, NoVectorSets: noVS})
						if want := !noVS && cfg.Index != nil && (cfg.Index.Distance == "" || cfg.Index.Distance == store.Cosine); s.VectorSets() != want {
							t.Fatalf("VectorSets() = %v, want %v", s.VectorSets(), want)
						}
						return s
					})
				})
			}
		}
	}
}
