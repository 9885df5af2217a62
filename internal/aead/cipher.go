package aead

import (
	"errors"

	"github.com/memvault/memvault/crypto"
)

// Cipher is an authenticated cipher with associated data. Implementations are
// safe for concurrent use.
type Cipher interface {
	// Name is the cipher's name, used as the type tag suffix. It never
	// contains '+'.
	Name() string
	// Encrypt seals plaintext, binding it to aad (which may be nil).
	Encrypt(plaintext, aad []byte) ([]byte, error)
	// Decrypt opens a ciphertext produced by Encrypt with the same aad. Any
	// failure is ErrDecrypt.
	Decrypt(ciphertext, aad []byte) ([]byte, error)
}

// KeyedCipher is a Cipher that can report which key opened a ciphertext.
// Key rotation tools use it to find values still encrypted under an old key.
type KeyedCipher interface {
	Cipher
	// DecryptKey is Decrypt that also returns the id of the key that
	// opened the ciphertext.
	DecryptKey(ciphertext, aad []byte) (plaintext []byte, id crypto.KeyID, err error)
	// Keyring returns the keys the cipher uses.
	Keyring() *crypto.Keyring
}

// ErrAAD is returned by the LangGraph "aes" cipher when given associated
// data, which its format cannot carry.
var ErrAAD = errors.New("crypto: the aes format carries no associated data")
