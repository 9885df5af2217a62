package keys

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"

	"github.com/memvault/memvault/crypto"
	"github.com/memvault/memvault/internal/keyaccess"
)

// ErrUnwrap is the one error a Provider returns for a wrapped key it cannot
// open: wrong KEK, tampered bytes, or a key wrapped for another subject.
// It never says which.
var ErrUnwrap = errors.New("keys: data key does not unwrap")

// Provider holds a key-encryption key (KEK) and wraps and unwraps data keys
// with it. Associated data binds each wrapped key to its subject and key
// id, so a wrapped key copied to another subject does not unwrap.
// Implementations are safe for concurrent use.
type Provider interface {
	// KEKID names the KEK and its version, such as "env:<key id>" or
	// "pkcs11:<token>/<label>"; it is stored with every key it wraps.
	KEKID() string
	// Wrap seals dataKey under the KEK.
	Wrap(ctx context.Context, dataKey, ad []byte) ([]byte, error)
	// Unwrap opens a key Wrap sealed with the same ad; any failure is
	// ErrUnwrap.
	Unwrap(ctx context.Context, wrapped, ad []byte) ([]byte, error)
}

// kekInfo is the HKDF label of the environment provider's KEK: a key of
// its own, so the master key itself never wraps anything.
const kekInfo = "memvault/kek/v1"

// EnvProvider is the default Provider: its KEK is derived (HKDF-SHA256)
// from a master key — LANGGRAPH_AES_KEY — and wraps with AES-256-GCM.
type EnvProvider struct {
	id   string
	aead cipher.AEAD
}

// NewEnvProvider returns the provider whose KEK derives from master.
func NewEnvProvider(master *crypto.Key) (*EnvProvider, error) {
	if master == nil {
		return nil, errors.New("keys: nil master key")
	}
	kek, err := hkdf.Key(sha256.New, master.Material(keyaccess.Token{}), nil, kekInfo, 32)
	if err != nil {
		return nil, fmt.Errorf("keys: derive KEK: %w", err)
	}
	block, err := aes.NewCipher(kek)
	if err != nil {
		return nil, fmt.Errorf("keys: %w", err)
	}
	g, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("keys: %w", err)
	}
	return &EnvProvider{id: "env:" + master.ID().String(), aead: g}, nil
}

// EnvProviders returns a provider per key of ring, the primary first: the
// first wraps new keys, all unwrap (after LANGGRAPH_AES_KEY is rotated,
// keys wrapped under the previous one still open until RotateKEK).
func EnvProviders(ring *crypto.Keyring) ([]Provider, error) {
	var out []Provider
	for _, k := range ring.Keys() {
		p, err := NewEnvProvider(k)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}

// KEKID implements Provider: "env:" and the master key's id.
func (p *EnvProvider) KEKID() string { return p.id }

// Wrap implements Provider: a random 12-byte nonce, then AES-GCM.
func (p *EnvProvider) Wrap(_ context.Context, dataKey, ad []byte) ([]byte, error) {
	out := make([]byte, 12, 12+len(dataKey)+16)
	if _, err := rand.Read(out); err != nil {
		return nil, fmt.Errorf("keys: nonce: %w", err)
	}
	return p.aead.Seal(out, out, dataKey, ad), nil
}

// Unwrap implements Provider.
func (p *EnvProvider) Unwrap(_ context.Context, wrapped, ad []byte) ([]byte, error) {
	if len(wrapped) < 12+16 {
		return nil, ErrUnwrap
	}
	k, err := p.aead.Open(nil, wrapped[:12], wrapped[12:], ad)
	if err != nil {
		return nil, ErrUnwrap
	}
	return k, nil
}
