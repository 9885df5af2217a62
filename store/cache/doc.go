// Package cache wraps a store.Store with a read-through LRU
// (hashicorp/golang-lru/v2) of Get results, for backends where a Get costs
// a round trip and a decryption.
//
// What is cached: the result of Get, both items and absences (a negative
// result saves the round trip of get-or-create patterns as much as a
// positive one). Keys are (namespace, key). Values are deep-copied in and
// out, so callers never share memory with the cache.
//
// Consistency: the cache forgets a key whenever a write through it (Put,
// Delete, a Batch's PutOps) touches the key, and a Get that raced with such
// a write never caches the older result. Writes made elsewhere (another
// process, or the inner store used directly) are seen after at most
// Options.MaxAge. Search and ListNamespaces always go to the inner store.
//
// Erasure: an item the inner store seals under a data subject's own keys
// (SubjectSealer: every memvault store with per-subject keys, found
// through wrappers with an Unwrap method) is never cached, so after the
// subject's erasure returns, in this process or another, no Get serves it;
// such Gets cost what the inner store's Get does.
//
// Audit: over a store that records every read (ReadRecorder, as
// audit.Store) the cache keeps nothing, since a hit would be a read with no
// record; put the cache under the audit decorator to cache audited reads.
//
// TTLs: a Get that refreshes the TTL must reach the inner store, which
// keeps the expiry. So an item with a TTL (Item.ExpiresAt set) is served
// from the cache only to a Get with store.WithRefreshTTL(false), and only
// until it expires; an expired item is never served, by the cache or by the
// inner store. Items without TTL, the common case,
// are served from the cache by every Get. Give Options.Now the inner
// store's clock.
package cache
