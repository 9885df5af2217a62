package storetest

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/memvault/memvault/crypto"
	"github.com/memvault/memvault/reencrypt"
	"github.com/memvault/memvault/serde"
	"github.com/memvault/memvault/store"
)

// RunReencrypt checks key rotation on a backend: open must return a store
// on the same storage every time it is called, using the given serializer
// for values; the store must implement store.Reencrypter. Stores that
// implement io.Closer are closed between phases.
//
// Items are written under key A, the store is reopened with key B (A kept
// for decryption), a dry run must change nothing, re-encryption must
// rewrite every item once, and afterwards key B alone reads every item while
// key A alone fails with serde.ErrDecrypt.
func RunReencrypt(t *testing.T, open func(t *testing.T, s serde.Serializer) store.Store) {
	t.Helper()
	ctx := context.Background()
	enc := func(primary byte, previous ...byte) serde.Serializer {
		keys := []*crypto.Key{}
		for _, seed := range append([]byte{primary}, previous...) {
			b := make([]byte, 32)
			for i := range b {
				b[i] = seed + byte(i)
			}
			k, err := crypto.NewKey(b)
			if err != nil {
				t.Fatal(err)
			}
			keys = append(keys, k)
		}
		ring, err := crypto.NewKeyring(keys[0], keys[1:]...)
		if err != nil {
			t.Fatal(err)
		}
		s, err := serde.NewEncrypted(serde.JSONPlus{}, ring)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	const n = 23
	ns := func(i int) store.Namespace { return store.Namespace{"users", fmt.Sprintf("u%d", i%4), "memories"} }
	value := func(i int) map[string]any { return map[string]any{"text": fmt.Sprintf("memory %d", i), "i": int64(i)} }

	s := open(t, enc('A'))
	if _, ok := s.(store.Reencrypter); !ok {
		t.Fatalf("%T does not implement store.Reencrypter", s)
	}
	for i := 0; i < n; i++ {
		if err := s.Put(ctx, ns(i), fmt.Sprintf("k%d", i), value(i)); err != nil {
			t.Fatal(err)
		}
	}
	closeStore(t, s)

	s = open(t, enc('B', 'A'))
	re := s.(store.Reencrypter)
	dry, err := re.Reencrypt(ctx, reencrypt.Options{DryRun: true, BatchSize: 4})
	if err != nil || dry.Scanned != n || dry.Rewritten != n {
		t.Fatalf("dry run = %+v, %v; want %d scanned and to rewrite", dry, err, n)
	}
	st, err := re.Reencrypt(ctx, reencrypt.Options{BatchSize: 5})
	if err != nil || st.Rewritten != n {
		t.Fatalf("Reencrypt = %+v, %v; want %d rewritten", st, err, n)
	}
	again, err := re.Reencrypt(ctx, reencrypt.Options{})
	if err != nil || again.Rewritten != 0 {
		t.Fatalf("second Reencrypt = %+v, %v; want nothing left", again, err)
	}
	closeStore(t, s)

	s = open(t, enc('B'))
	for i := 0; i < n; i++ {
		it, err := s.Get(ctx, ns(i), fmt.Sprintf("k%d", i))
		if err != nil || it == nil || it.Value["text"] != value(i)["text"] {
			t.Fatalf("key B alone, item %d: %+v, %v", i, it, err)
		}
	}
	closeStore(t, s)

	s = open(t, enc('A'))
	if _, err := s.Get(ctx, ns(0), "k0"); !errors.Is(err, serde.ErrDecrypt) {
		t.Fatalf("retired key A: err = %v, want serde.ErrDecrypt", err)
	}
	closeStore(t, s)
}

func closeStore(t *testing.T, s store.Store) {
	t.Helper()
	if c, ok := s.(interface{ Close() error }); ok {
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
	}
}
