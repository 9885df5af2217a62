// Package engine implements the public store contract (store.Store and the
// optional interfaces every store of this module offers) once, on top of a
// store.Driver: option and argument checks, TTL resolution, expiry and
// refresh-on-read, embedding and vector spaces, encoding, sealing and
// opening values, filters, scoring, ordering, paging, conditional puts, the
// sweeper. A driver only stores and returns rows (see store.Driver) and
// declares what its storage does better; the optional interfaces of this
// package (ANNTx, ScoreTx, FilterTx, CondTx, FenceTx, IndexTx,
// IndexWriter, FloatSource) are how it offers that, and the engine keeps
// the rule around each.
//
// The package is exported so that drivers in other modules (MongoDB,
// Redis) can run on it, as store/memstore, store/sqlitestore and
// store/pgstore do. It is UNSTABLE, like store.Driver: do not build on it
// outside memvault until it is declared stable. A store returns
// New(itsDriver, Options{…}) embedded in its own type and runs
// storetest.Run. The exported API names no internal type, so that a
// driver outside this module can implement every optional interface; a
// driver whose declared capabilities its transactions do not back is
// refused with ErrDriverCaps.
package engine
