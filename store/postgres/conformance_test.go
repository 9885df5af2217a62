package postgres_test

import (
	"testing"

	"github.com/memvault/memvault/serde"
	"github.com/memvault/memvault/store"
	"github.com/memvault/memvault/store/postgres"
	"github.com/memvault/memvault/store/storetest"
)

// TestConformance runs the whole store suite on PostgreSQL, plaintext and
// encrypted, with the index kinds the suite's indexed stores get.
func TestConformance(t *testing.T) {
	for _, tc := range []struct {
		name  string
		ann   store.ANNKind
		serde func(testing.TB) serde.Serializer
	}{
		{"Plain/HNSW", store.HNSW, nil},
		{"Plain/Flat", store.Flat, nil},
		{"Plain/IVFFlat", store.IVFFlat, nil},
		{"Encrypted/HNSW", store.HNSW, func(t testing.TB) serde.Serializer { return newSealed(t) }},
		{"Encrypted/Flat", store.Flat, func(t testing.TB) serde.Serializer { return newSealed(t) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			storetest.Run(t, func(t *testing.T, cfg storetest.Config) store.Store {
				opts := postgres.Options{TTL: cfg.TTL, Now: cfg.Now}
				if cfg.Index != nil {
					idx := *cfg.Index
					idx.ANN.Kind = tc.ann
					opts.Index = &idx
				}
				if tc.serde != nil {
					opts.Serde = tc.serde(t)
				}
				s, _ := open(t, opts)
				return s
			})
		})
	}
}
