// Package vecindex is the in-process vector index of the stores whose
// database has no vector search of its own (store/sqlitestore; store/memstore
// when asked: memstore.Options.VectorIndexBytes): a 1-bit sign code per stored vector (codes.go), held in
// memory for one generation of the store (Cache), ranked by upper bounds
// of the scores against the query (Estimator); the best of them bounded
// again in memory by the 5-bit middle part of their codes (mid.go), and
// those still above the page by the 8-bit fine part of their stored codes
// (fine.go), read from the storage, so that a search reads and scores
// exactly only the best few vectors even inside one dense topic, whose
// items share most sign bits; kept up to date from the
// store's change log, loaded from a snapshot (snapshot.go) and checked
// against the store's coverage (coverage.go).
//
// The package holds no data of its own: a driver keeps the codes, the
// change log, the snapshot and the generation in its storage, written in
// the same transactions as the items, and gives the index read access to
// one consistent state of them through Source.
//
// It is exported for drivers in other modules that have no vector search
// of their own; like store.Driver it is UNSTABLE.
package vecindex
