package crypto

import "errors"

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
	DecryptKey(ciphertext, aad []byte) (plaintext []byte, id KeyID, err error)
	// Keyring returns the keys the cipher uses.
	Keyring() *Keyring
}

// Sentinel errors.
var (
	// ErrDecrypt is the single error for every decryption failure.
	ErrDecrypt = errors.New("crypto: decryption failed")
	// ErrKeyNotSet is returned when LANGGRAPH_AES_KEY is unset. Its text
	// is LangGraph's.
	ErrKeyNotSet = errors.New("LANGGRAPH_AES_KEY environment variable is not set.")
	// ErrKeySize is returned for a key that is not 16, 24 or 32 bytes
	// long. Its text is LangGraph's.
	ErrKeySize = errors.New("LANGGRAPH_AES_KEY must be 16, 24, or 32 bytes long.")
	// ErrKeyEncoding is returned for a "base64:" or "hex:" key that does
	// not decode.
	ErrKeyEncoding = errors.New("malformed encoded key")
	// ErrKeyWhitespace is returned for a raw key that starts or ends with
	// white space — in LANGGRAPH_AES_KEY and LANGGRAPH_AES_KEY_PREVIOUS
	// alike. Such a key almost always comes from `echo` or a file's final
	// newline, and its bytes are not the ones the operator sees; memvault
	// neither trims it silently (that would make another key) nor uses it.
	ErrKeyWhitespace = errors.New("raw key starts or ends with white space (a newline from echo or a file?): remove it, or give the exact bytes as hex:… or base64:…")
	// ErrAAD is returned by the LangGraph "aes" cipher when given
	// associated data, which its format cannot carry.
	ErrAAD = errors.New("crypto: the aes format carries no associated data")
)
