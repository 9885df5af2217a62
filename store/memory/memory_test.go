package memory_test

import (
	"testing"

	"github.com/memvault/memvault/store"
	"github.com/memvault/memvault/store/memory"
	"github.com/memvault/memvault/store/storetest"
)

func newStore(t *testing.T, cfg storetest.Config) store.Store {
	s, err := memory.New(memory.Options{Index: cfg.Index, TTL: cfg.TTL, Now: cfg.Now})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestConformance(t *testing.T) {
	storetest.Run(t, newStore)
}
