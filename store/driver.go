package store

import (
	"context"
	"time"
)

// Driver is the storage a store runs on: the seam between the store's
// engine, which owns every rule of the Store contract, and a database.
//
// DO NOT IMPLEMENT Driver outside this module yet. The interface is
// written down so that the drivers of this module (store/memory today;
// store/sqlite and store/postgres next, then MongoDB and Redis) implement
// one small, documented thing, but it will change while those drivers move
// onto it: there is no compatibility promise for it until it is declared
// stable. Program against Store and the optional interfaces instead.
//
// What a driver does, in one sentence each: read rows by coordinates
// (DriverTx.Rows); write a set of rows, with their vectors, in one
// transaction where the storage has them (Driver.Update, DriverTx.Write);
// list a page in key order (DriverTx.Page) or a namespace prefix's rows in
// update order (DriverTx.Scan); delete a set of rows (DriverTx.Delete*);
// list namespaces; declare its capabilities (DriverCaps).
//
// What a driver must not do: decide anything the contract decides. The
// engine checks namespaces, keys, options and limits, resolves TTLs and
// computes expiries and refreshes, embeds and rotates vectors into their
// subjects' spaces, copies values in and out, applies filters, scores,
// orders, pages, keeps CreatedAt on replace and moves UpdatedAt forward,
// and runs conditional puts. A driver stores exactly the rows it is given
// and returns exactly the rows that are stored; the one judgement it makes
// is the expiry cut-off the engine passes it (now), so that a database can
// skip expired rows in its own query. A driver that needs more than this
// seam offers is a sign that the seam is wrong, not a licence to copy a
// rule into the driver: change the seam.
type Driver interface {
	// Name prefixes the store's errors ("memory", "sqlite").
	Name() string
	// Caps declares what the storage offers beyond the seam.
	Caps() DriverCaps
	// View runs fn on one consistent, read-only state of the storage.
	View(ctx context.Context, fn func(DriverTx) error) error
	// Update runs fn in one write transaction: everything fn writes
	// becomes visible at once, or (when fn or the commit fails) nothing
	// does, and fn's reads see no other writer's changes meanwhile. A
	// storage without transactions must serialize Update calls.
	Update(ctx context.Context, fn func(DriverTx) error) error
	// Close releases the storage; the engine calls it once, after the
	// last operation.
	Close() error
}

// DriverCaps are the capabilities a Driver declares. The engine uses what
// is declared and does the rest itself; a decorator never claims a
// capability its inner value lacks.
type DriverCaps struct {
	// Transactions: Update is atomic and isolated by the storage itself
	// (not only by a lock of this process), so several processes may share
	// it.
	Transactions bool
	// RefreshInView: DriverTx.Refresh may be called inside View (the
	// storage can change an expiry without a write transaction, as the
	// memory driver does atomically). Otherwise the engine refreshes in an
	// Update after the read.
	RefreshInView bool
	// SharedValues: the Value of a Row returned by the driver is the
	// stored map itself, which the engine copies before handing it out
	// (and the driver keeps the copy the engine writes, never the caller's).
	SharedValues bool
	// ANN: the storage ranks vectors itself (pgvector). The engine then
	// asks it for ranked candidates instead of scoring every vector.
	// Reserved: no driver of this module declares it yet.
	ANN bool
	// ServerTTL: the storage deletes expired rows itself; the engine's
	// sweeper then only calls DeleteExpired on demand. Reserved.
	ServerTTL bool
}

// RowKey names a row: its namespace as stored (Namespace.String) and key.
type RowKey struct{ NS, Key string }

// Row is a stored item as the driver keeps it.
type Row struct {
	RowKey
	// Namespace is the parsed namespace when the driver keeps it (nil:
	// the engine parses NS).
	Namespace Namespace
	Value     map[string]any
	// Created and Updated are as the engine wrote them.
	Created, Updated time.Time
	// Expires is the expiry (zero: never); TTLMinutes the TTL a
	// refresh-on-read applies (0: none).
	Expires    time.Time
	TTLMinutes int
}

// RowWrite is one row to store, replacing any row at its key and all of
// that row's vectors.
type RowWrite struct {
	Row
	// Vectors replace the row's vectors when Reindex is set; otherwise
	// the row keeps the vectors it had.
	Reindex bool
	Vectors []Vector
}

// Vector is one stored vector of an item: the field its text came from,
// the vector (in its item's space, as the engine made it) and its
// Euclidean norm (0: not known; the engine computes it).
type Vector struct {
	Field string
	Vec   []float32
	Norm  float64
}

// DriverTx is one View or Update of a Driver. Its methods are valid only
// during the call that made it; reads in an Update see the writes made
// before them in it. now is the engine's clock: a row with an expiry at or
// before now is expired, and every read below but Rows skips expired rows.
type DriverTx interface {
	// Rows calls fn with the stored rows (expired ones too) at keys, in
	// any order; absent keys are skipped. The Row is valid only during
	// the call.
	Rows(ctx context.Context, keys []RowKey, fn func(Row)) error
	// Scan calls fn with the live rows whose namespace is prefix or under
	// it (every row for an empty prefix), most recently updated first, then
	// by namespace and key, until fn returns false. With withoutVectors it
	// skips rows that have vectors.
	Scan(ctx context.Context, prefix Namespace, now time.Time, withoutVectors bool, fn func(Row) bool) error
	// Vectors calls fn with every vector of the live rows under prefix, an
	// item's vectors one after another (never interleaved with another
	// item's, so that the engine keeps one item's best score); updated is
	// the row's Updated. The vector is valid only during the call. An
	// error of fn stops the scan and is returned.
	Vectors(ctx context.Context, prefix Namespace, now time.Time, fn func(k RowKey, updated time.Time, v Vector) error) error
	// Page returns the live rows of namespace ns (exactly, as stored) whose
	// key is greater than after, in byte order of keys, at most limit.
	Page(ctx context.Context, ns, after string, limit int, now time.Time) ([]Row, error)
	// Namespaces returns the distinct namespaces of the live rows under
	// prefix, in any order.
	Namespaces(ctx context.Context, prefix Namespace, now time.Time) ([]Namespace, error)
	// Write stores rows (each replaces the row at its key); Delete removes
	// the rows at keys with their vectors.
	Write(ctx context.Context, rows []RowWrite) error
	Delete(ctx context.Context, keys []RowKey) error
	// Refresh sets the expiry of the row at k, if there is one.
	Refresh(ctx context.Context, k RowKey, expires time.Time) error
	// DeletePrefix deletes every row (live or expired) under prefix, which
	// is not empty, with its vectors; DeleteExpired every row expired at
	// now. Both return how many rows they deleted.
	DeletePrefix(ctx context.Context, prefix Namespace) (int, error)
	DeleteExpired(ctx context.Context, now time.Time) (int, error)
}
