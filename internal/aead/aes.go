package aead

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"fmt"

	"github.com/memvault/memvault/crypto"
	"github.com/memvault/memvault/internal/keyaccess"
)

// AESName is the name of LangGraph's cipher, the "aes" in "msgpack+aes".
const AESName = "aes"

const (
	aesNonceSize = 16
	aesTagSize   = 16
	aesOverhead  = aesNonceSize + aesTagSize
)

// AES is LangGraph's "aes" cipher: nonce(16) ‖ tag(16) ‖ ciphertext, no
// associated data, the mode not recorded. It encrypts with the keyring's
// primary key in its configured mode and decrypts with any key in either
// mode (configured mode first). Associated data must be empty.
type AES struct {
	ring  *crypto.Keyring
	mode  crypto.Mode
	suite []aesKey // primary first
	rand  func([]byte) error
}

type aesKey struct {
	id  crypto.KeyID
	gcm cipher.AEAD
	eax *eax
}

// NewAES returns the LangGraph "aes" cipher writing in mode.
func NewAES(ring *crypto.Keyring, mode crypto.Mode) (*AES, error) {
	if ring == nil {
		return nil, fmt.Errorf("crypto: nil keyring")
	}
	if mode != crypto.ModeGCM && mode != crypto.ModeEAX {
		return nil, fmt.Errorf("crypto: unknown AES mode %d", int(mode))
	}
	c := &AES{ring: ring, mode: mode, rand: randRead}
	for _, k := range ring.Keys() {
		b, err := aes.NewCipher(k.Material(keyaccess.Token{}))
		if err != nil {
			return nil, fmt.Errorf("crypto: key %s: %w", k.ID(), crypto.ErrKeySize)
		}
		g, err := cipher.NewGCMWithNonceSize(b, aesNonceSize)
		if err != nil {
			return nil, fmt.Errorf("crypto: gcm: %v", err)
		}
		c.suite = append(c.suite, aesKey{id: k.ID(), gcm: g, eax: newEAX(b)})
	}
	return c, nil
}

func randRead(b []byte) error {
	_, err := rand.Read(b)
	return err
}

// Name returns "aes".
func (c *AES) Name() string { return AESName }

// Mode returns the mode used to encrypt.
func (c *AES) Mode() crypto.Mode { return c.mode }

// Keyring returns the cipher's keys.
func (c *AES) Keyring() *crypto.Keyring { return c.ring }

// Encrypt seals plaintext with the primary key. aad must be empty.
func (c *AES) Encrypt(plaintext, aad []byte) ([]byte, error) {
	if len(aad) != 0 {
		return nil, ErrAAD
	}
	// Spare capacity for the GCM tag, which Seal appends after the ciphertext.
	out := make([]byte, aesOverhead+len(plaintext), aesOverhead+len(plaintext)+aesTagSize)
	nonce := out[:aesNonceSize]
	if err := c.rand(nonce); err != nil {
		return nil, fmt.Errorf("crypto: random nonce: %w", err)
	}
	return c.sealNonce(out, plaintext), nil
}

// sealNonce fills out (whose first 16 bytes are the nonce) with the blob.
func (c *AES) sealNonce(out, plaintext []byte) []byte {
	k := c.suite[0]
	nonce := out[:aesNonceSize]
	switch c.mode {
	case crypto.ModeEAX:
		tag := k.eax.seal(out[aesOverhead:], nonce, plaintext, nil)
		copy(out[aesNonceSize:aesOverhead], tag[:])
	default:
		// Seal writes ct ‖ tag; LangGraph wants tag ‖ ct.
		sealed := k.gcm.Seal(out[aesOverhead:aesOverhead], nonce, plaintext, nil)
		copy(out[aesNonceSize:aesOverhead], sealed[len(plaintext):])
	}
	return out
}

// Decrypt opens a blob. aad must be empty.
func (c *AES) Decrypt(ciphertext, aad []byte) ([]byte, error) {
	p, _, err := c.DecryptKey(ciphertext, aad)
	return p, err
}

// DecryptKey opens a blob and reports which key opened it.
func (c *AES) DecryptKey(blob, aad []byte) ([]byte, crypto.KeyID, error) {
	if len(aad) != 0 {
		return nil, crypto.KeyID{}, ErrAAD
	}
	if len(blob) < aesOverhead {
		return nil, crypto.KeyID{}, crypto.ErrDecrypt
	}
	nonce, tag, ct := blob[:aesNonceSize], blob[aesNonceSize:aesOverhead], blob[aesOverhead:]
	modes := [2]crypto.Mode{c.mode, 1 - c.mode}
	var buf []byte
	for _, m := range modes {
		for _, k := range c.suite {
			switch m {
			case crypto.ModeGCM:
				if buf == nil {
					buf = make([]byte, len(ct)+aesTagSize)
				}
				copy(buf, ct)
				copy(buf[len(ct):], tag)
				p, err := k.gcm.Open(buf[:0], nonce, buf, nil)
				if err == nil {
					return p, k.id, nil
				}
			case crypto.ModeEAX:
				p := make([]byte, len(ct))
				if k.eax.open(p, nonce, ct, nil, tag) == nil {
					return p, k.id, nil
				}
			}
		}
	}
	return nil, crypto.KeyID{}, crypto.ErrDecrypt
}
