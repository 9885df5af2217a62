package adaptertest_test

import (
	"context"
	"testing"

	"github.com/memvault/memvault/adapters/shared/labels"
	"github.com/memvault/memvault/memvaulttest/adaptertest"
	"github.com/memvault/memvault/memvaulttest/testkeys"
	"github.com/memvault/memvault/store"
)

// An adapter's test runs once per backend, and a second handle of a
// backend stands for a restarted process. The example is compiled, not
// run: Backends needs a test's *testing.T (temporary files and cleanups
// that end with the test) and the PostgreSQL cluster pgtest.Main starts
// for the test binary (see TestReopenSeesTheSameData, which runs this).
func Example() {
	_ = func(t *testing.T) {
		ctx := context.Background()
		bs := adaptertest.Backends(t, adaptertest.Options{Indexed: true})
		for _, b := range bs {
			t.Run(b.Name, func(t *testing.T) {
				ns := store.Namespace{"notes"}
				if err := b.Store(t).Put(ctx, ns, "k", map[string]any{"text": "a private note"}); err != nil {
					t.Fatal(err)
				}
				if it, err := b.Store(t).Get(ctx, ns, "k"); err != nil || it == nil {
					t.Fatalf("after a restart: %v, %v", it, err)
				}
				// The SQLite backend's files hold nothing in clear.
				testkeys.NoPlaintext(t, b.Files, "a private note")
			})
		}
	}
}

// An adapter's erasure test describes how the adapter writes and reads a
// user's data and Forget does the rest (on SQLite and PostgreSQL, through
// vault.Open): forgetting "carol.smith" leaves nothing of hers readable,
// in the store or in a restored copy, and dave's data as it was. Compiled,
// not run, for the reasons above; adapters/adk's erasure_test.go runs it.
func ExampleForget() {
	_ = func(t *testing.T) {
		ctx := context.Background()
		// A user id may hold '.', which no namespace label may: the
		// adapter escapes it, and its subject is the escaped label.
		ns := func(user string) store.Namespace { return store.Namespace{"users", labels.Escape(user), "notes"} }
		adaptertest.Forget(t, adaptertest.Erasure{
			Prefixes: [][]string{{"users"}},
			Subject:  labels.Escape,
			Write: func(t *testing.T, st store.Store, user string) {
				if err := st.Put(ctx, ns(user), "n1", map[string]any{"text": adaptertest.Marker(user)}); err != nil {
					t.Fatal(err)
				}
			},
			Read: func(t *testing.T, st store.Store, user string) []string {
				it, err := st.Get(ctx, ns(user), "n1")
				if err != nil {
					t.Fatal(err)
				}
				if it == nil {
					return nil
				}
				return []string{it.Value["text"].(string)}
			},
		})
	}
}
