package memstore

import (
	"bytes"
	"context"
	"testing"

	"github.com/memvault/memvault/crypto"
	"github.com/memvault/memvault/serde"
	"github.com/memvault/memvault/store"
	"github.com/memvault/memvault/store/engine"
	"github.com/memvault/memvault/store/storetest"
)

// encrypted is memvault's default encrypting serializer under a fixed
// test key.
func encrypted(t testing.TB) serde.Serializer {
	t.Helper()
	k, err := crypto.ParseRawKey("0123456789abcdef0123456789abcdef")
	if err != nil {
		t.Fatal(err)
	}
	ring, err := crypto.NewKeyring(k)
	if err != nil {
		t.Fatal(err)
	}
	e, err := serde.NewEncrypted(nil, ring)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// sealedEngine is the engine on this package's driver with an encrypting
// serializer: the driver then gets and keeps sealed bytes (Row.Value), as
// store/sqlitestore's does, never maps.
func sealedEngine(t testing.TB, cfg storetest.Config) (*engine.Engine, *driver) {
	d := &driver{items: make(map[store.RowKey]*entry), codes: true}
	e, err := engine.New(d, engine.Options{Index: cfg.Index, TTL: cfg.TTL, Now: cfg.Now, Serde: encrypted(t), VectorIndexBytes: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	return e, d
}

// TestConformanceSealed runs the conformance suite on the engine's sealed
// values path (encoding, sealing, the fence, opening) over a real driver.
func TestConformanceSealed(t *testing.T) {
	storetest.Run(t, func(t *testing.T, cfg storetest.Config) store.Store {
		e, _ := sealedEngine(t, cfg)
		return e
	})
}

// TestSealedRows: with a serializer, what the driver stores is an envelope
// sealed to the item's namespace and key: no plaintext, and the same bytes
// under another key do not open.
func TestSealedRows(t *testing.T) {
	ctx := context.Background()
	e, d := sealedEngine(t, storetest.Config{})
	defer e.Close()
	ns := store.Namespace{"users", "alice"}
	if err := e.Put(ctx, ns, "k", map[string]any{"secret": "prefers email"}); err != nil {
		t.Fatal(err)
	}
	row := d.items[store.RowKey{NS: "users.alice", Key: "k"}].row
	if row.Doc != nil || len(row.Value) == 0 || bytes.Contains(row.Value, []byte("prefers email")) {
		t.Fatalf("stored row: doc %v, value %q; want sealed bytes only", row.Doc, row.Value)
	}
	it, err := e.Get(ctx, ns, "k")
	if err != nil || it == nil || it.Value["secret"] != "prefers email" {
		t.Fatalf("Get = %v, %v", it, err)
	}
	// The sealed bytes moved to another key: bound to their key, they do
	// not open there.
	moved := &entry{row: row}
	moved.row.RowKey = store.RowKey{NS: "users.alice", Key: "other"}
	d.items[moved.row.RowKey] = moved
	if it, err := e.Get(ctx, ns, "other"); err == nil {
		t.Fatalf("Get of moved bytes = %v, want an error", it)
	}
}
