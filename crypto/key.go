package crypto

import (
	"crypto/hkdf"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/memvault/memvault/internal/keyaccess"
)

// KeyIDSize is the length of a KeyID.
const KeyIDSize = 8

// KeyID identifies a key without revealing it: the first 8 bytes of
// HMAC-SHA256(key, "memvault/key-id/v1").
type KeyID [KeyIDSize]byte

// String returns the id in hex.
func (id KeyID) String() string { return hex.EncodeToString(id[:]) }

// Key is an AES master key (16, 24 or 32 bytes). Its bytes are never
// printed: String and GoString show the key id only.
type Key struct {
	b  []byte
	id KeyID
}

// NewKey copies b into a Key. b must be 16, 24 or 32 bytes long.
func NewKey(b []byte) (*Key, error) {
	k, err := newKey(b)
	if err != nil {
		return nil, fmt.Errorf("crypto: %w", err)
	}
	return k, nil
}

// newKey is NewKey with errors that do not name the package, for callers
// that add their own context.
func newKey(b []byte) (*Key, error) {
	switch len(b) {
	case 16, 24, 32:
	default:
		return nil, &keySizeError{n: len(b)}
	}
	k := &Key{b: append([]byte(nil), b...)}
	m := hmac.New(sha256.New, k.b)
	m.Write([]byte("memvault/key-id/v1"))
	copy(k.id[:], m.Sum(nil))
	return k, nil
}

// keySizeError is ErrKeySize about a key of n bytes. LangGraph's text
// names LANGGRAPH_AES_KEY whichever key it is about: a key from another
// variable (name) gets a text naming that variable, so the error does not
// send the operator to a variable that is right.
type keySizeError struct {
	n    int
	name string // the variable the key came from; "" or EnvKey: LangGraph's text
	hint string // what the key looks like it was meant as; never its bytes
}

func (e *keySizeError) Error() string {
	s := fmt.Sprintf("key of %d bytes", e.n)
	if e.hint != "" {
		s += " (" + e.hint + ")"
	}
	if e.name == "" || e.name == EnvKey {
		return s + ": " + ErrKeySize.Error()
	}
	return s + ": " + e.name + " keys must be 16, 24, or 32 bytes long"
}

// Is makes errors.Is(err, ErrKeySize) hold.
func (e *keySizeError) Is(target error) bool { return target == ErrKeySize }

// encodedHint says what a raw key of the wrong size looks like it was
// meant as: the base64 or hex encoding of a key of a valid size, given
// without its "base64:" or "hex:" prefix (a generated 32-byte key in base64
// is 44 characters). It names only the encoding and the size.
func encodedHint(s string) string {
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding, base64.RawStdEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(s); err == nil && validKeySize(len(b)) {
			return fmt.Sprintf("it is the base64 of a %d-byte key: write it as \"base64:\" followed by the key", len(b))
		}
	}
	if b, err := hex.DecodeString(s); err == nil && validKeySize(len(b)) {
		return fmt.Sprintf("it is the hex of a %d-byte key: write it as \"hex:\" followed by the key", len(b))
	}
	return ""
}

func validKeySize(n int) bool { return n == 16 || n == 24 || n == 32 }

// ParseRawKey reads s exactly as LangGraph reads LANGGRAPH_AES_KEY: its UTF-8
// bytes are the key.
func ParseRawKey(s string) (*Key, error) { return NewKey([]byte(s)) }

// ParseKey reads a key as LangGraph does (raw UTF-8 bytes) unless s starts
// with "base64:" (standard or URL alphabet, padding optional) or "hex:", in
// which case the rest is decoded first.
func ParseKey(s string) (*Key, error) {
	k, err := parseKey(s)
	if err != nil {
		return nil, fmt.Errorf("crypto: %w", err)
	}
	return k, nil
}

// parseKey is ParseKey with errors that do not name the package.
func parseKey(s string) (*Key, error) {
	switch {
	case strings.HasPrefix(s, "base64:"):
		t := strings.TrimRight(strings.TrimPrefix(s, "base64:"), "=")
		b, err := base64.RawStdEncoding.DecodeString(t)
		if err != nil {
			b, err = base64.RawURLEncoding.DecodeString(t)
		}
		if err != nil {
			return nil, fmt.Errorf("%w: base64: value does not decode", ErrKeyEncoding)
		}
		return newKey(b)
	case strings.HasPrefix(s, "hex:"):
		b, err := hex.DecodeString(strings.TrimPrefix(s, "hex:"))
		if err != nil {
			return nil, fmt.Errorf("%w: hex: value does not decode", ErrKeyEncoding)
		}
		return newKey(b)
	}
	return newKey([]byte(s))
}

// ID returns the key id.
func (k *Key) ID() KeyID { return k.id }

// Len returns the key length in bytes.
func (k *Key) Len() int { return len(k.b) }

// String returns "key:<id>"; never the key bytes.
func (k *Key) String() string { return "key:" + k.id.String() }

// GoString is String, so %#v does not print key bytes either.
func (k *Key) GoString() string { return k.String() }

// Format makes every fmt verb print String.
func (k *Key) Format(f fmt.State, _ rune) { _, _ = f.Write([]byte(k.String())) }

// Material returns the key's bytes to memvault's own ciphers (the
// envelope and LangGraph's "aes" format, in internal/aead). Its argument
// can only be made inside memvault (internal/keyaccess), so the method is
// of no use elsewhere. The bytes are secret and must not be modified.
func (k *Key) Material(keyaccess.Token) []byte { return k.b }

// DangerousDeriveSubkey returns n bytes of key material derived from k for
// one purpose (HKDF-SHA256 with k as input key material, the salt
// "memvault/subkey/v1" and purpose as info), for features that need a
// secret of their own under the master key, such as keyed embeddings and
// vector sealing. Distinct purposes give independent keys, and none
// reveals k. The bytes are secret: never log them or put them in errors.
func (k *Key) DangerousDeriveSubkey(purpose string, n int) ([]byte, error) {
	b, err := hkdf.Key(sha256.New, k.b, []byte("memvault/subkey/v1"), purpose, n)
	if err != nil {
		return nil, fmt.Errorf("crypto: derive subkey: %w", err)
	}
	return b, nil
}
