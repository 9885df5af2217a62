package cache_test

import (
	"testing"

	"github.com/memvault/memvault/store"
	"github.com/memvault/memvault/store/cache"
	"github.com/memvault/memvault/store/memstore"
	"github.com/memvault/memvault/store/storetest"
)

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T, cfg storetest.Config) store.Store {
		inner, err := memstore.New(memstore.Options{Index: cfg.Index, TTL: cfg.TTL, Now: cfg.Now})
		if err != nil {
			t.Fatal(err)
		}
		c, err := cache.New(inner, cache.Options{Size: 64, Now: cfg.Now})
		if err != nil {
			t.Fatal(err)
		}
		return c
	})
}
