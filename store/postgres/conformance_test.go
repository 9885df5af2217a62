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
		name    string
		ann     store.ANNKind
		serde   func(testing.TB) serde.Serializer
		halfvec bool // halfvec columns (pgvector-go's HalfVector in binary)
		simple  bool // the simple protocol: vectors go as text
	}{
		{name: "Plain/HNSW", ann: store.HNSW},
		{name: "Plain/Flat", ann: store.Flat},
		{name: "Plain/IVFFlat", ann: store.IVFFlat},
		{name: "Plain/HNSW/halfvec", ann: store.HNSW, halfvec: true},
		{name: "Plain/HNSW/SimpleProtocol", ann: store.HNSW, simple: true},
		{name: "Encrypted/HNSW", ann: store.HNSW, serde: func(t testing.TB) serde.Serializer { return newSealed(t) }},
		{name: "Encrypted/Flat", ann: store.Flat, serde: func(t testing.TB) serde.Serializer { return newSealed(t) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			storetest.Run(t, func(t *testing.T, cfg storetest.Config) store.Store {
				opts := postgres.Options{TTL: cfg.TTL, Now: cfg.Now}
				if cfg.Index != nil {
					idx := *cfg.Index
					idx.ANN.Kind = tc.ann
					idx.ANN.HalfVec = tc.halfvec
					opts.Index = &idx
				}
				if tc.serde != nil {
					opts.Serde = tc.serde(t)
				}
				if tc.simple {
					return openSimpleProtocol(t, opts)
				}
				s, _ := open(t, opts)
				return s
			})
		})
	}
}
