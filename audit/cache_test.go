package audit_test

import (
	"testing"

	"github.com/memvault/memvault/audit"
	"github.com/memvault/memvault/store"
	"github.com/memvault/memvault/store/cache"
	"github.com/memvault/memvault/store/memstore"
)

// TestCacheOverAuditedStoreRecordsEveryRead: a read-through cache wrapped
// around an audited store answered repeated Gets from memory, so only the
// first of them was recorded — reads without records, where the README
// promises that nothing is read unaudited. Over a store that records
// reads the cache keeps nothing; under the decorator it caches and every
// Get is still recorded.
func TestCacheOverAuditedStoreRecordsEveryRead(t *testing.T) {
	ns := store.Namespace{"users", "carol"}
	for _, tc := range []struct {
		name     string
		build    func(t *testing.T, inner store.Store, tr *audit.Trail) (store.Store, cache.Cache)
		wantHits uint64
	}{
		{"cache over audit", func(t *testing.T, inner store.Store, tr *audit.Trail) (store.Store, cache.Cache) {
			c, err := cache.New(audit.NewStore(inner, tr, nil), cache.Options{})
			must(t, err)
			return c, c
		}, 0},
		{"audit over cache", func(t *testing.T, inner store.Store, tr *audit.Trail) (store.Store, cache.Cache) {
			c, err := cache.New(inner, cache.Options{})
			must(t, err)
			return audit.NewStore(c, tr, nil), c
		}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			inner, err := memstore.New(memstore.Options{})
			must(t, err)
			tr := auditedTrail(t)
			st, c := tc.build(t, inner, tr)
			must(t, st.Put(t.Context(), ns, "diet", map[string]any{"v": "no peanuts"}))
			for range 3 {
				it, err := st.Get(t.Context(), ns, "diet")
				if err != nil || it == nil {
					t.Fatalf("get: %v, %v", it, err)
				}
			}
			reads := 0
			must(t, tr.Records(t.Context(), audit.Filter{}, func(r audit.Record) error {
				if r.Op == audit.OpItemRead {
					reads++
				}
				return nil
			}))
			if reads != 3 {
				t.Errorf("%d reads recorded, want 3 (one per Get)", reads)
			}
			if got := c.Stats().Hits; got != tc.wantHits {
				t.Errorf("cache hits %d, want %d", got, tc.wantHits)
			}
		})
	}
}
