package serde_test

import (
	"bytes"
	"errors"
	"testing"

	"github.com/memvault/memvault/crypto"
	"github.com/memvault/memvault/serde"
)

func mustRing(t *testing.T, primary string, previous ...string) *crypto.Keyring {
	t.Helper()
	p, err := crypto.ParseKey(primary)
	if err != nil {
		t.Fatal(err)
	}
	var prev []*crypto.Key
	for _, s := range previous {
		k, err := crypto.ParseKey(s)
		if err != nil {
			t.Fatal(err)
		}
		prev = append(prev, k)
	}
	r, err := crypto.NewKeyring(p, prev...)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestReencryptRotation(t *testing.T) {
	const oldKey, newKey = "0123456789abcdef0123456789abcdef", "fedcba9876543210fedcba9876543210"
	aad := []byte("thread/messages/1")
	oldSer, err := serde.NewEncrypted(serde.MsgPack{}, mustRing(t, oldKey))
	if err != nil {
		t.Fatal(err)
	}
	typ, data, err := oldSer.DumpsTypedWith(map[string]any{"a": int64(1)}, aad)
	if err != nil {
		t.Fatal(err)
	}
	rotated, err := serde.NewEncrypted(serde.JSONPlus{}, mustRing(t, newKey, oldKey))
	if err != nil {
		t.Fatal(err)
	}
	nt, nd, changed, err := rotated.Reencrypt(typ, data, aad)
	if err != nil || !changed {
		t.Fatalf("Reencrypt = changed %v, err %v; want a rewrite", changed, err)
	}
	if nt != typ {
		t.Fatalf("inner format changed: %q -> %q", typ, nt)
	}
	if bytes.Equal(nd, data) {
		t.Fatal("ciphertext unchanged")
	}
	// A second pass finds nothing to do.
	if _, _, again, err := rotated.Reencrypt(nt, nd, aad); err != nil || again {
		t.Fatalf("second Reencrypt = %v, %v; want no rewrite", again, err)
	}
	// Only the new key is needed now.
	onlyNew, err := serde.NewEncrypted(serde.JSONPlus{}, mustRing(t, newKey))
	if err != nil {
		t.Fatal(err)
	}
	v, err := onlyNew.LoadsTypedWith(nt, nd, aad)
	if err != nil {
		t.Fatal(err)
	}
	if m, ok := v.(map[string]any); !ok || m["a"] != int64(1) {
		t.Fatalf("value after rotation = %#v", v)
	}
	// Bound to its row: another row's aad fails, generically.
	if _, _, _, err := rotated.Reencrypt(typ, data, []byte("other/messages/1")); !errors.Is(err, serde.ErrDecrypt) {
		t.Fatalf("moved value: err = %v, want ErrDecrypt", err)
	}
}

func TestReencryptPlaintext(t *testing.T) {
	const key = "0123456789abcdef0123456789abcdef"
	strict, err := serde.NewEncrypted(serde.JSONPlus{}, mustRing(t, key))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := strict.Reencrypt(serde.TypeJSON, []byte(`{"a":1}`), nil); !errors.Is(err, serde.ErrPlaintextRefused) {
		t.Fatalf("strict: err = %v, want ErrPlaintextRefused", err)
	}
	lax, err := serde.NewEncrypted(serde.JSONPlus{}, mustRing(t, key), serde.WithDangerousPlaintextReads())
	if err != nil {
		t.Fatal(err)
	}
	nt, nd, changed, err := lax.Reencrypt(serde.TypeJSON, []byte(`{"a":1}`), []byte("row"))
	if err != nil || !changed || nt != "json+"+lax.CipherName() {
		t.Fatalf("plaintext migration: %q changed=%v err=%v", nt, changed, err)
	}
	if _, err := strict.LoadsTypedWith(nt, nd, []byte("row")); err != nil {
		t.Fatalf("migrated value does not load strictly: %v", err)
	}
	if _, _, changed, err := lax.Reencrypt(serde.TypeEmpty, nil, nil); changed || err != nil {
		t.Fatalf("empty: changed=%v err=%v", changed, err)
	}
}
