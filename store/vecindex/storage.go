package vecindex

import (
	"context"

	"github.com/memvault/memvault/store"
)

// Key names an item: its namespace (dot-joined) and key, as a store
// driver names its rows.
type Key = store.RowKey

// State is what the index needs to know of the store at the generation a
// search reads, read together with it (store/sqlitestore: one row, in the
// search's read transaction).
type State struct {
	// Gen is the store's generation: every write that changes items
	// increments it, and logs the items it changed under it.
	Gen int64
	// CodesGen is the generation the codes are complete for: the index
	// serves only when it equals Gen (an older build, which wrote no
	// codes, leaves it behind until the driver recodes every vector).
	CodesGen int64
	// LogFloor is the newest generation whose changes the log no longer
	// holds: an index older than it reloads every code.
	LogFloor int64
	// Stored is the coverage of the items with codes, kept by every write.
	Stored StoredCoverage
	// SnapshotGone: the stored snapshot generation names a snapshot whose
	// parts are gone (deleted by hand or a tool, not by a write of the
	// store, which resets it).
	SnapshotGone bool
	// NoSnapshot: the storage holds no snapshot (a delete or a recode
	// dropped it, or none was ever stored). An index of the generation,
	// loaded, then stores one behind the search (with a SnapshotWriter):
	// a delete by a process that held no index leaves none otherwise.
	// A driver that does not report it leaves it false.
	NoSnapshot bool
}

// Source is one consistent read of a store's index data at the
// generation of a State read with it (store/sqlitestore: a read transaction).
// An implementation must guarantee that every method sees that same
// state, whatever other writers do meanwhile, and that:
//
//   - codes are the blobs EncodeCode made, one per stored vector, each
//     item's written in the transaction that wrote its vectors, under the
//     centre Quant returns (codes it cannot decode are skipped);
//   - the log names every item each write changed under the generation
//     the write produced, or marks that it changed every item;
//   - the snapshot parts are those TakeSnapshot returned for the
//     generation Quant reports, in order, or none.
type Source interface {
	// Quant returns the centre the codes were made around (nil: none)
	// and the generation of the stored snapshot (-1: none).
	Quant(ctx context.Context) (centre []float32, snapshotGen int64, err error)
	// Changed returns the distinct items logged after generation since;
	// full is true when a write since changed every item, or when more
	// than limit items changed.
	Changed(ctx context.Context, since int64, limit int) (keys []Key, full bool, err error)
	// Codes calls fn with every code of the items keys (in any order; an
	// item's codes may come in any order too). code is valid only during
	// the call.
	Codes(ctx context.Context, keys []Key, fn func(k Key, updated int64, code []byte)) error
	// AllCodes calls fn with every code, in increasing (namespace, key)
	// order as far as the storage can (an item's codes together), until
	// fn returns false. ns, key and code are valid only during the call.
	AllCodes(ctx context.Context, fn func(ns, key []byte, updated int64, code []byte) bool) error
	// SnapshotSize returns the total bytes of the snapshot's parts.
	SnapshotSize(ctx context.Context) (int64, error)
	// SnapshotParts calls use with each part of the snapshot, in order,
	// until it returns false. p is valid only during the call.
	SnapshotParts(ctx context.Context, use func(p []byte) bool) error
}

// Queries is a search's query vector in every vector space the search
// meets (a store with one space has one).
type Queries interface {
	// Estimator returns the estimator of the query in the space of
	// namespace ns for codes made around centre: nil when the namespace's
	// vectors score nothing (their data subject's keys are gone). known is
	// false when the space has not been resolved yet: Queries must not
	// read keys here (the index's lock is held), and Best then returns ns
	// as missing for the caller to resolve.
	Estimator(ns string, centre []float32) (e *Estimator, known bool)
}
