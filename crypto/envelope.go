package crypto

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/sha256"
	"fmt"
)

// EnvelopeName is the name of memvault's envelope cipher.
const EnvelopeName = "mvgcm"

// Envelope format constants (version 1); see the package documentation.
const (
	EnvelopeV1       = 0x01
	envSaltSize      = 32
	envNonceSize     = 12
	envHeaderSize    = 1 + KeyIDSize + envSaltSize + envNonceSize
	envTagSize       = 16
	envelopeOverhead = envHeaderSize + envTagSize
)

var envInfo = []byte("memvault/envelope/v1")

// Envelope is memvault's default cipher: per-record AES-256-GCM keys derived
// with HKDF-SHA256 from the keyring's master key and a random salt, a key id
// naming the master key, and caller associated data. See the package
// documentation for the byte layout.
type Envelope struct {
	ring *Keyring
	rand func([]byte) error
}

// NewEnvelope returns the envelope cipher over ring.
func NewEnvelope(ring *Keyring) (*Envelope, error) {
	if ring == nil {
		return nil, fmt.Errorf("crypto: nil keyring")
	}
	return &Envelope{ring: ring, rand: randRead}, nil
}

// Name returns "mvgcm".
func (e *Envelope) Name() string { return EnvelopeName }

// Keyring returns the cipher's keys.
func (e *Envelope) Keyring() *Keyring { return e.ring }

// Encrypt seals plaintext under the primary key, bound to aad.
func (e *Envelope) Encrypt(plaintext, aad []byte) ([]byte, error) {
	out := make([]byte, envHeaderSize, envelopeOverhead+len(plaintext))
	k := e.ring.Primary()
	out[0] = EnvelopeV1
	copy(out[1:], k.id[:])
	if err := e.rand(out[1+KeyIDSize : envHeaderSize]); err != nil {
		return nil, fmt.Errorf("crypto: random salt: %w", err)
	}
	return seal(out, k, plaintext, aad)
}

// seal completes out, which holds a filled header.
func seal(out []byte, k *Key, plaintext, aad []byte) ([]byte, error) {
	g, err := recordAEAD(k, out[:envHeaderSize])
	if err != nil {
		return nil, err
	}
	nonce := out[1+KeyIDSize+envSaltSize : envHeaderSize]
	return g.Seal(out, nonce, plaintext, headerAAD(out[:envHeaderSize], aad)), nil
}

// headerAAD is header ‖ aad; the header has a fixed size, so the join is
// unambiguous.
func headerAAD(header, aad []byte) []byte {
	if len(aad) == 0 {
		return header
	}
	b := make([]byte, 0, len(header)+len(aad))
	return append(append(b, header...), aad...)
}

func recordAEAD(k *Key, header []byte) (cipher.AEAD, error) {
	info := make([]byte, 0, len(envInfo)+1+KeyIDSize)
	info = append(append(info, envInfo...), header[:1+KeyIDSize]...)
	salt := header[1+KeyIDSize : 1+KeyIDSize+envSaltSize]
	rk, err := hkdf.Key(sha256.New, k.b, salt, string(info), 32)
	if err != nil {
		return nil, fmt.Errorf("crypto: hkdf: %v", err)
	}
	b, err := aes.NewCipher(rk)
	if err != nil {
		return nil, fmt.Errorf("crypto: aes: %v", err)
	}
	return cipher.NewGCM(b)
}

// Decrypt opens an envelope bound to aad.
func (e *Envelope) Decrypt(ciphertext, aad []byte) ([]byte, error) {
	p, _, err := e.DecryptKey(ciphertext, aad)
	return p, err
}

// DecryptKey opens an envelope and reports the id of the key that opened it.
func (e *Envelope) DecryptKey(env, aad []byte) ([]byte, KeyID, error) {
	id, err := EnvelopeKeyID(env)
	if err != nil {
		return nil, KeyID{}, err
	}
	k, ok := e.ring.Lookup(id)
	if !ok {
		return nil, KeyID{}, ErrDecrypt
	}
	g, err := recordAEAD(k, env[:envHeaderSize])
	if err != nil {
		return nil, KeyID{}, ErrDecrypt
	}
	nonce := env[1+KeyIDSize+envSaltSize : envHeaderSize]
	p, err := g.Open(nil, nonce, env[envHeaderSize:], headerAAD(env[:envHeaderSize], aad))
	if err != nil {
		return nil, KeyID{}, ErrDecrypt
	}
	if p == nil {
		p = []byte{}
	}
	return p, id, nil
}

// EnvelopeKeyID parses an envelope's header and returns the id of the key it
// claims; it does not authenticate anything. A malformed header is
// ErrDecrypt.
func EnvelopeKeyID(env []byte) (KeyID, error) {
	var id KeyID
	if len(env) < envelopeOverhead || env[0] != EnvelopeV1 {
		return id, ErrDecrypt
	}
	copy(id[:], env[1:1+KeyIDSize])
	return id, nil
}
