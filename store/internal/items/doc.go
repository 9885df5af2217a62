// Package items is the store's core for items: it turns a PutOp into what a
// backend stores — the namespace and key checked, the value in memvault's
// JSON model (CloneValue), the TTL resolved (ResolveTTL), the texts to embed
// extracted and, for a batch, embedded in one call, each item's vectors in
// its data subject's space (Config.Spaces) — and holds the rules
// every backend applies to reads: op checks (ValidateOp), TTL arithmetic,
// namespace listing, item order, conditional puts and listing windows. So
// memory, SQLite and PostgreSQL agree on all of it and only store and fetch
// rows.
package items
