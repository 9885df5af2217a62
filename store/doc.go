// Package store defines memvault's long-term memory: namespaced JSON items
// shared across threads, with optional semantic search and expiry,
// compatible with LangGraph's BaseStore.
//
// The Store interface is implemented by store/memstore (in process),
// store/sqlitestore and store/pgstore (LangGraph's store tables); store/cache
// wraps any of them with a read-through LRU, and store/storetest is the
// conformance suite they all pass.
//
// This package is the contract: the interfaces, ops, options, items and
// errors a caller programs against. The semantics the backends share live
// once, behind store/internal, so that every backend agrees with the others
// and with LangGraph:
//
//   - Namespaces (Namespace.Validate): labels non-empty, without '.', and
//     not rooted at "langgraph".
//   - Index texts: the texts to embed for an item (IndexConfig.Fields and
//     WithIndex paths), byte-identical to LangGraph's get_text_at_path,
//     including Python's formatting of leaves and the "<path>.<i>" field
//     names.
//   - Filters (SearchOptions.Filter): literal JSON equality and $eq $ne $gt
//     $gte $lt $lte, with numbers compared as numbers (LangGraph's Postgres
//     store compares text, so there 9 > 10).
//   - Scores (SearchItem.Score): cosine similarity, minus the L2 distance,
//     or the inner product, as LangGraph's Postgres store reports them.
//   - TTLs (TTLConfig, WithTTL): kept in whole minutes for refreshes, as
//     LangGraph's ttl_minutes column.
//   - Vector spaces: with a serializer that keeps per-subject keys for
//     namespaces (keys.Hierarchy), each data subject's vectors are rotated
//     by a secret of the subject's own as they are written, and a search
//     compares each vector with its query rotated alike, so that erasing
//     the subject leaves no copy of its vectors or codes that the master
//     key can read (IndexConfig.DangerousSharedSubjectVectors). A backend
//     stores what the core hands it and, for a search whose prefix spans
//     several subjects, scores each vector against the query of its own
//     space (store/internal/spaces).
//
// # Writing a driver
//
// A backend is storage only. It implements Driver (driver.go): begin
// read-only and write transactions, read rows by coordinates, write and
// delete rows, list a page in key order or a prefix's rows in update
// order, list namespaces, and declare its capabilities (DriverCaps). It
// stores each value in the form the engine hands it, the value column's
// bytes (JSON, or an envelope sealed to the item's namespace and key), and
// never opens them. The store engine (store/engine) implements
// Store, Sweeper, ConditionalPutter, Lister and PrefixDeleter once on top
// of it, so a new driver writes no rule of the contract: no validation,
// TTL arithmetic, embedding, encoding or sealing, filtering, scoring,
// paging or version handling.
//
// A storage without vector search of its own declares
// DriverCaps.CodeIndex and keeps, beside each vector, the code the engine
// makes, a generation and (for several processes) a log of changed items:
// the engine then ranks searches with the in-process index of
// store/vecindex and scores exactly only the best few items. A
// storage that does some of the engine's work better declares it and the
// engine uses it, keeping the rule: upserts that keep created_at
// (DriverCaps.UpsertVersions), its own nearest-neighbour search and
// scoring (DriverCaps.ANN, engine.ANNTx, engine.ScoreTx), filters in its
// query language (engine.FilterTx, re-checked by the engine), the write
// fence and conditional puts in its statements (engine.FenceTx,
// engine.CondTx).
//
// The seam names exported types only (store.WriteFence is the erasure
// fence a FenceTx runs), so a driver in another module implements it
// whole. A storage whose transactions read by statement and send their
// writes at commit declares DriverCaps.StatementReads; it must then also
// declare UpsertVersions and offer engine.CondTx and engine.FenceTx, or
// the engine refuses it (engine.ErrDriverCaps) rather than make a write
// depend on a read of another snapshot. store/engine's driver_test.go is
// such a driver, written through exported names only, in about 250 lines:
// PostgreSQL's transaction model in memory, passing storetest.Run and
// storetest.RunErasure.
//
// store/memstore is the reference driver (about 200 lines, 270 with the
// code index's side); store/sqlitestore the SQL driver with a code index
// (about 1 200 lines with its schema), store/pgstore the one with
// server-side vector search (about 1 600). Run storetest.Run on a new
// driver, and add a driver method only when the seam lacks one, never a
// copy of a rule. The interface is not for outside implementation until it
// is declared stable.
package store
