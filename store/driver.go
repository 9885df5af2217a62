package store

import (
	"context"
	"time"
)

// Driver is the storage a store runs on: the seam between the store's
// engine, which owns every rule of the Store contract, and a database.
//
// DO NOT IMPLEMENT Driver outside this module yet. The interface is
// written down so that the drivers of this module (store/memstore today;
// store/sqlitestore and store/pgstore next, then MongoDB and Redis) implement
// one small, documented thing, but it will change while those drivers move
// onto it: there is no compatibility promise for it until it is declared
// stable. Program against Store and the optional interfaces instead.
//
// What a driver does, in one sentence each: begin a read-only or write
// transaction (Begin; atomic and isolated where the storage has
// transactions, serialized by a lock where it has not); read a row by
// coordinates or a set of rows (DriverTx.Get, DriverTx.Rows); write or
// delete one row with its vectors (DriverTx.Put, DriverTx.Delete); list a
// page in key order (DriverTx.Page) or a namespace prefix's rows in update
// order (DriverTx.Scan); hand out the vectors under a prefix
// (DriverTx.Vectors); list namespaces; delete a prefix or the expired rows;
// declare its capabilities (DriverCaps).
//
// A driver stores a value in the form the engine hands it: Row.Value, the
// bytes of the value column (JSON, or an envelope sealed to the row's
// namespace and key by the store's serializer), which it returns
// unchanged; it never decodes, decrypts or inspects them. Only a driver
// that keeps rows in this process may declare DriverCaps.InProcessValues
// and keep the value itself (Row.Doc) instead, and then only for a store
// without serializer (the engine encodes and seals whenever there is one).
//
// What a driver must not do: decide anything the contract decides. The
// engine checks namespaces, keys, options and limits, resolves TTLs and
// computes expiries and refreshes, embeds and rotates vectors into their
// subjects' spaces, encodes, seals and opens values, applies filters,
// scores, orders, pages, keeps CreatedAt on replace and moves UpdatedAt
// forward, and runs conditional puts and the fence of an erasure. A driver
// stores exactly the rows it is given and returns exactly the rows that
// are stored; the one judgement it makes is the expiry cut-off the engine
// passes it (now), so that a database can skip expired rows in its own
// query. A driver that needs more than this seam offers is a sign that the
// seam is wrong, not a licence to copy a rule into the driver: change the
// seam.
type Driver interface {
	// Name prefixes the store's errors ("memory", "sqlite").
	Name() string
	// Caps declares what the storage offers beyond the seam.
	Caps() DriverCaps
	// Begin starts a read-only (write false) or write transaction. A
	// write transaction's changes become visible at Commit, all at once,
	// or never (Rollback, or a failed Commit), and its reads see no other
	// writer's changes meanwhile; a read-only one sees one consistent
	// state — unless the driver declares DriverCaps.StatementReads. A
	// storage without transactions serializes write transactions. The
	// engine ends every transaction it begins with exactly one Commit or
	// Rollback.
	Begin(ctx context.Context, write bool) (DriverTx, error)
	// Close releases the storage; the engine calls it once, after the
	// last operation.
	Close() error
}

// DriverCaps are the capabilities a Driver declares. The engine uses what
// is declared and does the rest itself; a decorator never claims a
// capability its inner value lacks.
type DriverCaps struct {
	// Transactions: Begin's transactions are atomic and isolated by the
	// storage itself (not only by a lock of this process), so several
	// processes may share it.
	Transactions bool
	// RefreshInView: DriverTx.Refresh may be called in a read-only
	// transaction (the storage can change an expiry without a write
	// transaction, as the memory driver does atomically). Otherwise the
	// engine refreshes in a write transaction after the read.
	RefreshInView bool
	// InProcessValues: the driver keeps rows in this process and may keep
	// a store without serializer's values as maps (Row.Doc) instead of
	// their encoding, which the engine then hands it as private copies
	// and copies again before handing them out. A store with a
	// serializer always gets, and stores, encoded (sealed) bytes.
	InProcessValues bool
	// CodeIndex: the driver keeps a code beside each vector
	// (Vector.Code, made by the engine), a generation bumped by every
	// write that changes items, and hands them to the engine's in-process
	// vector index (store/vecindex): its transactions implement
	// engine.IndexTx, which names the index's types. Searches then rank by
	// codes and score exactly only the best few items.
	CodeIndex bool
	// ANN: the storage ranks vectors itself (pgvector). The engine then
	// asks it for ranked candidates instead of scoring every vector.
	// Reserved: no driver of this module declares it yet.
	ANN bool
	// ServerTTL: the storage deletes expired rows itself; the engine's
	// sweeper then only calls DeleteExpired on demand. Reserved.
	ServerTTL bool
	// StatementReads: a transaction's reads are statements of their own,
	// each seeing what was committed before it, and its writes go to the
	// storage together at Commit (PostgreSQL: one batch, so no connection
	// is held between the engine's calls). The engine then makes no write
	// depend on a read of the same transaction: the driver must also
	// declare UpsertVersions, and its transactions implement
	// engine.CondTx (a conditional put is one statement) and
	// engine.FenceTx (the fence is sent with the writes). A search's
	// rounds may then see rows written between them, as separate queries
	// would.
	StatementReads bool
	// UpsertVersions: DriverTx.Put keeps the Created of the row it
	// replaces and moves Updated past the replaced row's by the storage's
	// own tick when the engine's is not after it (SQLite: one nanosecond,
	// PostgreSQL: one microsecond, in their ON CONFLICT DO UPDATE), so the
	// engine does not read each row before it writes it: UpdatedAt names
	// a version (store.PutCondition) even within one clock tick.
	UpsertVersions bool
	// TxRecords: the driver's write transactions implement
	// engine.RecordTx, inserting an audit record (store.WithRecord) with
	// the write's rows, in the same commit.
	TxRecords bool
}

// RowKey names a row: its namespace as stored (Namespace.String) and key.
type RowKey struct{ NS, Key string }

// Row is a stored item as the driver keeps it: the columns of LangGraph's
// store table.
type Row struct {
	RowKey
	// Namespace is the parsed namespace when the driver keeps it (nil:
	// the engine parses NS). The engine never modifies it.
	Namespace Namespace
	// Value is the value column as the engine encoded it (see Driver);
	// nil when Doc holds the value.
	Value []byte
	// Doc is the value itself, only for a driver that declares
	// DriverCaps.InProcessValues in a store without serializer; the
	// engine never modifies it.
	Doc map[string]any
	// Created and Updated are as the engine wrote them.
	Created, Updated time.Time
	// Expires is the expiry (zero: never); TTLMinutes the TTL a
	// refresh-on-read applies (0: none).
	Expires    time.Time
	TTLMinutes int
}

// RowWrite is one row to store, replacing any row at its key.
type RowWrite struct {
	Row
	// Reindex: Vectors replace all of the row's vectors (none: it has
	// none); otherwise the row keeps the vectors it had.
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
	// Code is the vector's code for the engine's index, stored with it
	// by a driver that declares DriverCaps.CodeIndex (nil otherwise).
	Code []byte
}

// ScanAfter is the position after which DriverTx.Scan continues: the last
// row of the previous page.
type ScanAfter struct {
	RowKey
	Updated time.Time
}

// DriverTx is one transaction of a Driver (see Driver.Begin). Its methods
// are valid only until Commit or Rollback; reads in a write transaction see
// the writes made before them in it. now is the engine's clock: a row with
// an expiry at or before now is expired, and every read below but Get and
// Rows skips expired rows. A returned Row's slices and maps belong to the
// driver: the engine reads them and keeps none of them past the
// transaction unless the driver's documentation says they are immutable.
type DriverTx interface {
	// Commit makes a write transaction's changes visible and ends it;
	// Rollback ends a transaction without them (after a failed Commit
	// too). Ending a read-only transaction either way releases it.
	Commit() error
	Rollback() error
	// Get returns the stored row (expired or not) at k; ok is false when
	// there is none.
	Get(ctx context.Context, k RowKey) (r Row, ok bool, err error)
	// Rows appends to dst the stored rows (expired ones too) at keys, in
	// any order; absent keys are skipped.
	Rows(ctx context.Context, keys []RowKey, dst []Row) ([]Row, error)
	// Scan returns up to limit live rows whose namespace is prefix or
	// under it (every row for an empty prefix), most recently updated
	// first, then by namespace and key, starting after the row after
	// (nil: from the first). With withoutVectors it skips rows that have
	// vectors.
	Scan(ctx context.Context, prefix Namespace, now time.Time, withoutVectors bool, after *ScanAfter, limit int) ([]Row, error)
	// Vectors calls fn once per live row under prefix that has vectors,
	// with all of them; updated is the row's Updated. The vectors are
	// valid only during the call. An error of fn stops the scan and is
	// returned.
	Vectors(ctx context.Context, prefix Namespace, now time.Time, fn func(k RowKey, updated time.Time, vs []Vector) error) error
	// Page returns the live rows of namespace ns (exactly, as stored) whose
	// key is greater than after, in byte order of keys, at most limit.
	Page(ctx context.Context, ns, after string, limit int, now time.Time) ([]Row, error)
	// Namespaces returns the distinct namespaces of the live rows under
	// prefix, in any order.
	Namespaces(ctx context.Context, prefix Namespace, now time.Time) ([]Namespace, error)
	// Put stores a row (replacing the row at its key); Delete removes the
	// row at k, if any, with its vectors.
	Put(ctx context.Context, w RowWrite) error
	Delete(ctx context.Context, k RowKey) error
	// Refresh sets the expiry of the row at k, if there is one.
	Refresh(ctx context.Context, k RowKey, expires time.Time) error
	// DeletePrefix deletes every row (live or expired) under prefix, which
	// is not empty, with its vectors, and returns how many it deleted; a
	// driver that logs changes for other processes logs that every item
	// may have changed and keeps no name under prefix in its log (an
	// erasure leaves no name behind).
	DeletePrefix(ctx context.Context, prefix Namespace) (int, error)
	// DeleteExpired deletes every row whose expiry is before now, with
	// its vectors, and returns their keys (which the engine hands its
	// index: a sweep changes few items).
	DeleteExpired(ctx context.Context, now time.Time) ([]RowKey, error)
}

// WriteFence keeps a write of an erased subject's values out (see
// keys.Erase): the keys that sealed a write's values, which must still be
// live when the write commits. The engine makes it and hands it to a
// transaction that fences its writes itself (engine.FenceTx); otherwise it
// checks the fence itself, before the writes, in a transaction that holds
// its storage's write lock. Drivers only run it, inside the write's
// critical section: a driver that commits under a lock of its own calls
// Check under that lock; a SQL driver whose fence has Statements runs them
// first in the write's transaction (the key table's row lock then makes an
// erasure wait for the write). Its shape is checkpointer.WriteFence's, so
// that a driver of both contracts runs both alike.
type WriteFence interface {
	// Check fails, wrapping keys.ErrSubjectErased, when a key that sealed
	// the values was destroyed.
	Check(ctx context.Context) error
	// Statements are SQL statements to run first in the write's
	// transaction: the key table's fence, when the key table lives in the
	// same database (keys.SQLFencer), instead of Check; the data
	// database's erasure guard (keys.ErasureGuard) in any case. ok is
	// false when the key table's fence is not among them: Check must run
	// as well, inside the transaction. On SQLite a statement is a query
	// of one boolean, true when it refuses the write. A statement
	// refused because its key is gone fails with SQLSTATE
	// keys.FenceSQLState, which the driver reports wrapping
	// keys.ErrSubjectErased.
	Statements() (stmts []FenceStatement, ok bool)
}

// FenceStatement is one statement of a SQL fence, and its arguments.
type FenceStatement struct {
	SQL  string
	Args []any
}
