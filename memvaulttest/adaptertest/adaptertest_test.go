package adaptertest_test

import (
	"context"
	"testing"

	"github.com/memvault/memvault/memvaulttest/adaptertest"
	"github.com/memvault/memvault/memvaulttest/pgtest"
	"github.com/memvault/memvault/memvaulttest/testkeys"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// TestReopenSeesTheSameData: what one handle writes, a second handle of the
// same backend reads; the SQLite files hold it sealed.
func TestReopenSeesTheSameData(t *testing.T) {
	ctx := context.Background()
	bs := adaptertest.Backends(t, adaptertest.Options{Indexed: true})
	for _, b := range bs {
		t.Run(b.Name, func(t *testing.T) {
			if err := b.Store(t).Put(ctx, []string{"notes"}, "k", map[string]any{"text": "a private note"}); err != nil {
				t.Fatal(err)
			}
			it, err := b.Store(t).Get(ctx, []string{"notes"}, "k")
			if err != nil || it == nil || it.Value["text"] != "a private note" {
				t.Fatalf("reopened store: %v, %v", it, err)
			}
			if s := b.Saver(t); s == nil {
				t.Fatal("no saver")
			}
		})
	}
	testkeys.NoPlaintext(t, bs[1].Files, "a private note")
}
