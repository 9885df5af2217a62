package audit_test

import (
	"path/filepath"
	"testing"

	"github.com/memvault/memvault/audit"
	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/checkpointer/checkpointertest"
	"github.com/memvault/memvault/checkpointer/memsaver"
	"github.com/memvault/memvault/checkpointer/sqlitesaver"
	"github.com/memvault/memvault/store"
	"github.com/memvault/memvault/store/memstore"
	"github.com/memvault/memvault/store/storetest"
)

// auditedTrail is a fresh trail over a memory table, verified when the
// test ends: every operation a conformance case made was recorded in one
// unbroken chain.
func auditedTrail(t *testing.T) *audit.Trail {
	tr := trail(t, audit.NewMemoryTable())
	t.Cleanup(func() {
		if _, err := tr.Verify(t.Context()); err != nil {
			t.Errorf("the trail does not verify: %v", err)
		}
	})
	return tr
}

// TestSaverConformance: the audited saver passes the whole checkpointer
// conformance suite over the memory and the SQLite savers.
func TestSaverConformance(t *testing.T) {
	t.Run("memory", func(t *testing.T) {
		checkpointertest.Run(t, func(t *testing.T) checkpointer.Saver {
			inner, err := memsaver.New(memsaver.Options{})
			must(t, err)
			return audit.NewSaver(inner, auditedTrail(t), nil)
		})
	})
	t.Run("sqlite", func(t *testing.T) {
		checkpointertest.Run(t, func(t *testing.T) checkpointer.Saver {
			inner, err := sqlitesaver.Open(t.Context(), filepath.Join(t.TempDir(), "cp.db"), sqlitesaver.Options{})
			must(t, err)
			t.Cleanup(func() { inner.Close() })
			return audit.NewSaver(inner, auditedTrail(t), nil)
		})
	})
}

// TestStoreConformance: the audited store passes the whole store
// conformance suite over the memory store.
func TestStoreConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T, cfg storetest.Config) store.Store {
		inner, err := memstore.New(memstore.Options{Index: cfg.Index, TTL: cfg.TTL, Now: cfg.Now})
		must(t, err)
		return audit.NewStore(inner, auditedTrail(t), nil)
	})
}

// bareSaver and bareStore have only the methods of checkpointer.Saver and
// store.Store: none of the optional interfaces.
type (
	bareSaver struct{ checkpointer.Saver }
	bareStore struct{ store.Store }
)

// TestDecoratorsClaimOnlyInnerCapabilities: an audited saver or store
// implements an optional interface exactly when the value it wraps does,
// so that callers who look for one (a type assertion) fall back instead of
// getting an error; the suites then skip those cases rather than fail.
func TestDecoratorsClaimOnlyInnerCapabilities(t *testing.T) {
	full, err := memsaver.New(memsaver.Options{})
	must(t, err)
	fullStore, err := memstore.New(memstore.Options{})
	must(t, err)
	tr := trail(t, audit.NewMemoryTable())
	savers := map[string]checkpointer.Saver{"full": full, "bare": bareSaver{full}}
	stores := map[string]store.Store{"full": fullStore, "bare": bareStore{fullStore}}
	for name, inner := range savers {
		var got checkpointer.Saver = audit.NewSaver(inner, tr, nil)
		for cap, has := range map[string][2]bool{
			"ThreadLister":      {is[checkpointer.ThreadLister](inner), is[checkpointer.ThreadLister](got)},
			"Pruner":            {is[checkpointer.Pruner](inner), is[checkpointer.Pruner](got)},
			"Copier":            {is[checkpointer.Copier](inner), is[checkpointer.Copier](got)},
			"CheckpointDeleter": {is[checkpointer.CheckpointDeleter](inner), is[checkpointer.CheckpointDeleter](got)},
			"RunDeleter":        {is[checkpointer.RunDeleter](inner), is[checkpointer.RunDeleter](got)},
			"Reencrypter":       {is[checkpointer.Reencrypter](inner), is[checkpointer.Reencrypter](got)},
			"ThreadImporter":    {is[checkpointer.ThreadImporter](inner), is[checkpointer.ThreadImporter](got)},
			"Sweeper":           {is[checkpointer.Sweeper](inner), is[checkpointer.Sweeper](got)},
		} {
			if has[0] != has[1] {
				t.Errorf("%s saver: inner is a %s: %v; the audited saver: %v", name, cap, has[0], has[1])
			}
			if name == "full" && !has[1] {
				t.Errorf("the audited memory saver is no %s", cap)
			}
		}
		if u, ok := got.(interface{ Unwrap() checkpointer.Saver }); !ok || u.Unwrap() != inner {
			t.Errorf("%s saver: Unwrap does not return the inner saver", name)
		}
	}
	for name, inner := range stores {
		var got store.Store = audit.NewStore(inner, tr, nil)
		for cap, has := range map[string][2]bool{
			"Lister":            {is[store.Lister](inner), is[store.Lister](got)},
			"PrefixDeleter":     {is[store.PrefixDeleter](inner), is[store.PrefixDeleter](got)},
			"ConditionalPutter": {is[store.ConditionalPutter](inner), is[store.ConditionalPutter](got)},
			"Reencrypter":       {is[store.Reencrypter](inner), is[store.Reencrypter](got)},
			"Sweeper":           {is[store.Sweeper](inner), is[store.Sweeper](got)},
			"Reembedder":        {is[store.Reembedder](inner), is[store.Reembedder](got)},
		} {
			if has[0] != has[1] {
				t.Errorf("%s store: inner is a %s: %v; the audited store: %v", name, cap, has[0], has[1])
			}
		}
		if u, ok := got.(interface{ Unwrap() store.Store }); !ok || u.Unwrap() != inner {
			t.Errorf("%s store: Unwrap does not return the inner store", name)
		}
	}
}

func is[I any](v any) bool { _, ok := v.(I); return ok }

// TestBareDecoratorsConformance: over inner values with no optional
// interface, the audited saver and store still pass the suites (the cases
// of the optional interfaces skip: the decorators do not claim them).
func TestBareDecoratorsConformance(t *testing.T) {
	t.Run("saver", func(t *testing.T) {
		checkpointertest.Run(t, func(t *testing.T) checkpointer.Saver {
			inner, err := memsaver.New(memsaver.Options{})
			must(t, err)
			return audit.NewSaver(bareSaver{inner}, auditedTrail(t), nil)
		})
	})
	t.Run("store", func(t *testing.T) {
		storetest.Run(t, func(t *testing.T, cfg storetest.Config) store.Store {
			inner, err := memstore.New(memstore.Options{Index: cfg.Index, TTL: cfg.TTL, Now: cfg.Now})
			must(t, err)
			return audit.NewStore(bareStore{inner}, auditedTrail(t), nil)
		})
	})
}
