// Package items is the store's write core: it turns a PutOp into what a
// backend stores — the namespace and key checked, the value in memvault's
// JSON model (store.CloneValue), the TTL resolved, the texts to embed
// extracted and, for a batch, embedded in one call — so that memory, SQLite
// and PostgreSQL agree on all of it and only store the result.
package items
