// Package memstore is an in-process store.Store: LangGraph's InMemoryStore
// with the bugs fixed and the Postgres store's semantics where the two
// differ.
//
// Differences from LangGraph's InMemoryStore, all pinned down by
// store/storetest:
//
//   - A search without query lists the newest update first (Postgres
//     order), not in insertion order.
//   - A search with a query pages over scored and unscored items together
//     (LangGraph ignores the offset for unscored items, #8871).
//   - Re-putting an item replaces its vectors, so WithoutIndex and fields
//     that disappeared leave no stale vectors (#8214).
//   - Filters compare numbers numerically and never match missing fields,
//     not even with $ne (#8365, #8366).
//   - TTLs are supported (expiry from the injected clock, refresh on read,
//     expired items never served, a sweeper goroutine stopped by Close).
//   - created_at survives a replace; negative limits and offsets are
//     errors.
//
// Documents are embedded with EmbedDocuments when put (outside the lock),
// queries with EmbedQuery; scoring is an exact scan, fine for tens of
// thousands of items.
package memstore
