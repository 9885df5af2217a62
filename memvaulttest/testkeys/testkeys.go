package testkeys

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/memvault/memvault/crypto"
	"github.com/memvault/memvault/keys"
	"github.com/memvault/memvault/keys/memkeys"
	"github.com/memvault/memvault/serde"
)

// Key is the raw test key (32 bytes).
const Key = "0123456789abcdef0123456789abcdef"

// Encrypting returns an envelope-mode encrypting serializer (JsonPlus
// inside) keyed with Key; it fails t on error.
func Encrypting(t testing.TB) *serde.Encrypted {
	t.Helper()
	k, err := crypto.ParseKey(Key)
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

// NoPlaintext fails t when any of the files that exist holds one of the
// secrets as bytes (a SQLite database and its write-ahead log, say).
func NoPlaintext(t testing.TB, files []string, secrets ...string) {
	t.Helper()
	for _, f := range files {
		b, err := os.ReadFile(f)
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range secrets {
			if bytes.Contains(b, []byte(s)) {
				t.Errorf("%s holds %q in plaintext", filepath.Base(f), s)
			}
		}
	}
}

// Subjects returns a key hierarchy (keys.Hierarchy) over Encrypting, its
// key table in memory: a thread "<subject>-…" and a store namespace
// ("users", <subject>, …) are sealed under their subject's data key, the
// rest under Key. It fails t on error.
func Subjects(t testing.TB) *keys.Hierarchy {
	t.Helper()
	h, err := keys.New(keys.Options{
		Master:   Encrypting(t),
		Table:    memkeys.New(),
		Subjects: keys.Subjects{ThreadSeparator: "-", NamespacePrefix: []string{"users"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return h
}
