package cache_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/memvault/memvault/memvaulttest/testkeys"
	"github.com/memvault/memvault/serde"
	"github.com/memvault/memvault/store"
	"github.com/memvault/memvault/store/cache"
	"github.com/memvault/memvault/store/sqlitestore"
)

// unwrapper is a decorator of a store that offers nothing but Unwrap, as
// audit.Store does: the cache looks under it for the store that seals.
type unwrapper struct{ store.Store }

func (u unwrapper) Unwrap() store.Store { return u.Store }

// TestSubjectItemsNotCached (session 33): the cache kept a data subject's
// item, opened, and served it for up to MaxAge after the subject's keys
// were destroyed — an erasure that stops every read of the store under
// it. The cache now never keeps an item its inner store (or a store under
// its wrappers) seals under a subject's keys: after the keys are gone a
// Get fails as the store's does; an item of no subject is still served
// from the cache.
func TestSubjectItemsNotCached(t *testing.T) {
	ctx := context.Background()
	h := testkeys.Subjects(t) // ("users", <subject>, …) is the subject's
	st, err := sqlitestore.Open(ctx, filepath.Join(t.TempDir(), "items.db"), sqlitestore.Options{Serde: h})
	if err != nil {
		t.Fatal(err)
	}
	for _, wrapped := range []bool{false, true} {
		var inner store.Store = st
		if wrapped {
			inner = unwrapper{st}
		}
		c, err := cache.New(inner, cache.Options{})
		if err != nil {
			t.Fatal(err)
		}
		// A subject per round: the first one's erasure is not finished.
		subject := map[bool]string{false: "carol", true: "erin"}[wrapped]
		carol, shared := store.Namespace{"users", subject}, store.Namespace{"shared", subject}
		if err := c.Put(ctx, carol, "k", map[string]any{"text": "carol is allergic to peanuts"}); err != nil {
			t.Fatal(err)
		}
		if err := c.Put(ctx, shared, "k", map[string]any{"text": "opening hours"}); err != nil {
			t.Fatal(err)
		}
		for range 2 {
			for _, ns := range []store.Namespace{carol, shared, {"users", "dave"}} {
				if _, err := c.Get(ctx, ns, "k"); err != nil {
					t.Fatal(err)
				}
			}
		}
		// Every Get of carol's item and of dave's absent one went to the
		// store; the second Get of the shared item was a hit.
		if s := c.Stats(); s.Hits != 1 || s.Misses != 5 || s.Subject != 4 || s.Entries != 1 {
			t.Errorf("wrapped %v: stats %+v, want 1 hit, 5 misses, 4 of a subject, 1 entry", wrapped, s)
		}
		if _, err := h.DestroyKeys(ctx, subject); err != nil {
			t.Fatal(err)
		}
		if it, err := c.Get(ctx, carol, "k"); !errors.Is(err, serde.ErrDecrypt) || it != nil {
			t.Errorf("wrapped %v: Get of carol's item after her keys were destroyed: %v, %v; want serde.ErrDecrypt", wrapped, it, err)
		}
		if it, err := c.Get(ctx, shared, "k"); err != nil || it == nil {
			t.Errorf("wrapped %v: Get of the shared item: %v, %v", wrapped, it, err)
		}
	}
	st.Close()
}
