package crypto

import "errors"

// Sentinel errors.
var (
	// ErrDecrypt is the single error for every decryption failure.
	ErrDecrypt = errors.New("crypto: decryption failed")
	// ErrKeyNotSet is returned when LANGGRAPH_AES_KEY is unset. Its text
	// is LangGraph's.
	//lint:ignore ST1005 the text is LangGraph's, word for word
	ErrKeyNotSet = errors.New("LANGGRAPH_AES_KEY environment variable is not set.")
	// ErrKeySize is returned for a key that is not 16, 24 or 32 bytes
	// long. Its text is LangGraph's.
	//lint:ignore ST1005 the text is LangGraph's, word for word
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
)
