// Package aead holds memvault's authenticated ciphers: the formats in
// which values are sealed at rest. Serializers (package serde) use them;
// keys and keyrings come from package crypto. Envelope v1 and the "aes"
// format decrypt forever: the golden files in testdata are the contract,
// and TestGolden fails on any change to what they decrypt to.
//
// # Ciphers
//
// A [Cipher] is an AEAD with a name; the name becomes the suffix of a
// serializer type tag ("msgpack+aes", "json+mvgcm"). Two formats exist:
//
//   - [AES] (name "aes") is LangGraph's format, readable and writable by
//     Python's EncryptedSerializer.from_pycryptodome_aes:
//
//     nonce (16 bytes) ‖ tag (16 bytes) ‖ ciphertext (len(plaintext) bytes)
//
//     There is no associated data, no version byte and no key id, and the
//     AES mode is not recorded. memvault writes it with AES-GCM and a 16-byte
//     nonce (Python must be configured with mode=AES.MODE_GCM to read it) or,
//     when configured, with AES-EAX (Python's default). Reading tries the
//     configured mode first and then the other mode, with every key of the
//     keyring (primary first): a wrong guess fails its tag check, so trying is
//     safe, and a blob written by either Python configuration is read.
//
//   - [Envelope] (name "mvgcm") is memvault's own format, the default. Its
//     layout, version 1:
//
//     offset  size  field
//     0       1     version (0x01)
//     1       8     key id: first 8 bytes of HMAC-SHA256(master key, "memvault/key-id/v1")
//     9       32    salt, random; one Envelope uses it for up to RecordsPerSalt records
//     41      12    nonce, random per record
//     53      n+16  AES-256-GCM ciphertext of the n-byte plaintext, then its 16-byte tag
//
//     The record key is derived with HKDF-SHA256 (RFC 5869): once per master
//     key, PRK = HKDF-Extract(salt = "memvault/envelope/v1", IKM = master
//     key); per salt, record key = HKDF-Expand(PRK, info = "memvault/envelope/v1"
//     ‖ version ‖ key id ‖ salt, 32 bytes). (The random salt goes into info
//     so that the costly Extract step is done once per master key; Expand is
//     a single HMAC-SHA256.) An Envelope draws a new salt, and so a new
//     record key, after every RecordsPerSalt (2^20) records it seals, so no
//     AES-GCM key ever comes near the 2^32 random-nonce message limit,
//     whatever the master key's use, while the cost of deriving a key and
//     setting up AES-GCM is paid once per 2^20 records. (What a shared salt
//     reveals: that records were sealed by the same Envelope, usually the
//     same process, within the same 2^20 records.) The GCM
//     associated data is the 53-byte header followed by the caller's
//     associated data, so the header cannot be altered and a record only
//     opens where it was written. The key id names the master key so that a
//     keyring holding several keys (rotation) picks the right one without
//     trial decryption; it reveals nothing about the key. An Envelope keeps
//     the record keys of the last RecordCacheSize salts it opened (agents
//     read the same values at every step); the cache changes no result.
package aead
