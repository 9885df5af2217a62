// Package keys is memvault's key hierarchy: random data keys, one set per
// data subject (a user, a patient, a tenant), each wrapped by a
// key-encryption key (KEK) that a Provider holds and never hands out — the
// environment's master key by default, a hardware security module through
// PKCS#11 (github.com/memvault/memvault/keyproviders/pkcs11), or any other
// Provider. Wrapped data keys live in a Table (keys/memkeys, keys/sqlitekeys,
// keys/pgkeys), which may live apart from the data; unwrapped ones in a
// bounded in-memory cache.
//
// A Hierarchy is a serializer: give it to a checkpointer or a store as
// their Serde. Values of a subject — resolved from where they live by
// Subjects: a thread id's prefix, a store namespace's label — are sealed
// under that subject's data key; other values under the master key, as a
// serde.Encrypted seals them. Each ciphertext stays bound to its location.
//
// StartErasure destroys a subject's data keys (crypto-shredding), recording
// the erasure in the same transaction of the key table: every value sealed
// under them stops decrypting, also in copies and backups of the data taken
// before, as long as no copy of the key table (or of the provider's keys)
// from before survives. Writers check their sealing key inside their own
// transaction (internal/binding's Fence, LiveKey), so no write sealed under
// a destroyed key is ever acknowledged, and the subject stays erased until
// Readmit. PurgeErasure shows the destroyed keys' bytes are gone from the
// key table's storage (waiting for readers that still hold them), and
// FinishErasure returns the signed receipt; vault.Handle.ForgetWith runs
// the whole erasure, rows included. With subjects named in checkpoint
// metadata (Subjects.ThreadMetadataKey) every thread seals under keys of
// its own, and the erasure of a subject destroys those of every thread
// bound to it; a copy of a thread follows its source (FollowThread,
// recorded before the copy writes), so the erasure also reaches every copy
// of the subject's threads, transitively — copies made before the source
// was bound (an anonymous thread, then a login) included. RotateKEK
// re-wraps every data key under a new KEK and rewrites no data.
package keys
