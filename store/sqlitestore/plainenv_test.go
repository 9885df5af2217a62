package sqlitestore

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/memvault/memvault/internal/envelope"

	"github.com/memvault/memvault/store"
)

// TestNoSerializerRefusesEncryptedValues checks that a store opened without
// a serializer (no key) on an encrypted database reports the encrypted
// values instead of returning their envelopes as item values.
func TestNoSerializerRefusesEncryptedValues(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "enc.db")
	ns := store.Namespace{"users", "u1"}
	enc := openStore(t, path, Options{Serde: encrypted(t)})
	if err := enc.Put(ctx, ns, "k", map[string]any{"secret": "s"}); err != nil {
		t.Fatal(err)
	}
	if err := enc.Close(); err != nil {
		t.Fatal(err)
	}
	plain := openStore(t, path, Options{})
	defer plain.Close()
	it, err := plain.Get(ctx, ns, "k")
	if !errors.Is(err, envelope.ErrMalformed) {
		t.Fatalf("Get without serializer = %+v, %v; want envelope.ErrMalformed", it, err)
	}
	if _, err := plain.Search(ctx, ns, store.SearchOptions{}); !errors.Is(err, envelope.ErrMalformed) {
		t.Fatalf("Search without serializer: %v; want envelope.ErrMalformed", err)
	}
}
