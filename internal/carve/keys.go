package carve

import (
	"testing"

	"github.com/memvault/memvault/crypto"
	"github.com/memvault/memvault/serde"
)

// K1 and K2 are the raw test keys of a rotation plaintext → K1 → K2.
const (
	K1 = "0123456789abcdef0123456789abcdef"
	K2 = "fedcba9876543210fedcba9876543210"
)

// Rotation returns the serializers of the rotation's two re-encryptions:
// toK1 seals under K1 and reads plaintext; toK2 seals under K2 and reads
// K1. k1 is the key Scan searches for afterwards.
func Rotation(t testing.TB) (toK1, toK2 *serde.Encrypted, k1 *crypto.Key) {
	t.Helper()
	k1, err := crypto.ParseKey(K1)
	if err != nil {
		t.Fatal(err)
	}
	k2, err := crypto.ParseKey(K2)
	if err != nil {
		t.Fatal(err)
	}
	r1, err := crypto.NewKeyring(k1)
	if err != nil {
		t.Fatal(err)
	}
	r2, err := crypto.NewKeyring(k2, k1)
	if err != nil {
		t.Fatal(err)
	}
	if toK1, err = serde.NewEncrypted(nil, r1, serde.WithDangerousPlaintextReads()); err != nil {
		t.Fatal(err)
	}
	if toK2, err = serde.NewEncrypted(nil, r2); err != nil {
		t.Fatal(err)
	}
	return toK1, toK2, k1
}
