package redisstore_test

import (
	"context"
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
// plaintext, encrypted and with per-subject keys (whose searches across
// subjects span several vector spaces). On Redis 8, "vectorsets" ranks a
// search of one space through the vector set and the others by the code
// index; "index" (NoVectorSets) ranks every search by the code index,
// with the engine's exact float copy of small stores off so that the
// index itself serves; Redis 7 runs "index" and "floats" (the default
// options: small stores score from the float copy).
func TestConformance(t *testing.T) {
	serdes := map[string]func(t testing.TB) serde.Serializer{
		"plaintext": func(testing.TB) serde.Serializer { return nil },
		"encrypted": func(t testing.TB) serde.Serializer { return testkeys.Encrypting(t) },
		"subjects":  func(t testing.TB) serde.Serializer { return testkeys.Subjects(t) },
	}
	for _, v := range redistest.Versions {
		modes := []string{"index", "floats"}
		if v >= 8 {
			modes = []string{"vectorsets", "index"}
		}
		for _, mode := range modes {
			for enc, sd := range serdes {
				t.Run(fmt.Sprintf("redis%d/%s/%s", v, mode, enc), func(t *testing.T) {
					t.Parallel()
					srv := redistest.Shared(t, v)
					storetest.Run(t, func(t *testing.T, cfg storetest.Config) store.Store {
						opt := redisstore.Options{Prefix: redistest.Prefix(), Index: cfg.Index, TTL: cfg.TTL, Now: cfg.Now, Serde: sd(t),
							NoVectorSets: mode != "vectorsets"}
						open := redisstore.New
						if mode == "index" {
							open = redisstore.NewNoFloatCopy
						}
						s, err := open(context.Background(), srv.Client(t), opt)
						if err != nil {
							t.Fatal(err)
						}
						t.Cleanup(func() { _ = s.Close() })
						if want := mode == "vectorsets" && cfg.Index != nil && (cfg.Index.Distance == "" || cfg.Index.Distance == store.Cosine); s.VectorSets() != want {
							t.Fatalf("VectorSets() = %v, want %v", s.VectorSets(), want)
						}
						return s
					})
				})
			}
		}
	}
}
