package memstore_test

import (
	"testing"

	"github.com/memvault/memvault/store"
	"github.com/memvault/memvault/store/memstore"
	"github.com/memvault/memvault/store/storetest"
)

func newStore(t *testing.T, cfg storetest.Config) store.Store {
	s, err := memstore.New(memstore.Options{Index: cfg.Index, TTL: cfg.TTL, Now: cfg.Now})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestConformance(t *testing.T) {
	storetest.Run(t, newStore)
}

// TestConformanceCodeIndex runs the suite on a store that ranks searches
// by the code index (package vecindex), as store/sqlitestore does: the index
// runs on two drivers.
func TestConformanceCodeIndex(t *testing.T) {
	storetest.Run(t, func(t *testing.T, cfg storetest.Config) store.Store {
		s, err := memstore.New(memstore.Options{Index: cfg.Index, TTL: cfg.TTL, Now: cfg.Now, VectorIndexBytes: 1 << 20})
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}
