// Package crypto holds memvault's keys: parsing them the way LangGraph
// reads LANGGRAPH_AES_KEY, the keyring used for key rotation, the key ids
// that name keys in stored ciphertexts, and the one decryption error.
//
// # Keys
//
// [ParseKey] reads a key the way LangGraph reads LANGGRAPH_AES_KEY: the raw
// UTF-8 bytes of the string, which must be 16, 24 or 32 bytes long. As an
// opt-in extension, a value starting with "base64:" or "hex:" is decoded
// first (use [ParseRawKey] for a raw key that happens to start with one of
// those prefixes). [KeyringFromEnv] builds a [Keyring] from LANGGRAPH_AES_KEY
// (the primary key, used to encrypt) and LANGGRAPH_AES_KEY_PREVIOUS (comma
// separated, decryption only).
//
// The ciphers that use these keys — memvault's envelope ("mvgcm") and
// LangGraph's "aes" format — are described, with their byte layouts, in
// the README and in memvault's internal/aead package; serializers
// (serde.NewEncrypted) are how a program uses them.
//
// # Errors
//
// Every decryption failure (tampering, truncation, wrong key, unknown key id,
// wrong associated data) is [ErrDecrypt], which never says which check
// failed. No error text ever contains key bytes; key ids and lengths may
// appear.
package crypto
