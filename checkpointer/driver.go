package checkpointer

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"slices"
	"strings"
)

// Driver is the storage under a checkpointer: what a backend implements so
// that checkpointer/engine can run the Saver contract and its optional
// capabilities on it. The engine owns every rule — validation and limits,
// serialization and sealing, the parent rule of a put, which rows a
// delete, prune, retention sweep or run deletion removes (including the
// __pregel_tasks writes a kept v<4 checkpoint reads), re-sealing on copy,
// atomic import — and hands the driver rows to store, rows to fetch and
// sets of rows to delete. A driver stores and fetches; it decides nothing.
// A driver may declare a capability that runs a whole rule in the storage
// (DriverCapabilities.KeepLatest): the engine still says when, with every
// parameter, and the conformance suite holds it to the engine's rule.
//
// The interface is UNSTABLE: it changes as the MongoDB and Redis drivers
// land. DO NOT IMPLEMENT IT outside memvault yet; depend on the Saver
// contract instead.
//
// What a driver must do, in one sentence per method:
//   - read a checkpoint by coordinates, with its value rows, its writes and,
//     for a checkpoint before format 4, its parent's __pregel_tasks writes
//     (Load);
//   - list checkpoints newest first, exactly as a DriverQuery selects them
//     (Scan), and the threads in key order (Threads, ThreadInfos);
//   - store a put's rows, or a task's writes, atomically, keeping the
//     first value at each key (Put, PutWrites);
//   - run a set of reads and writes in one transaction, serialized with
//     every Put and PutWrites (Update).
//
// What a driver must not do: decode a checkpoint document, open or seal a
// value, choose which rows go, or apply a LangGraph rule of its own. A
// driver that needs more is a sign the seam is wrong.
//
// Every write runs its rows' WriteFence inside its critical section: a
// driver holding a process-wide lock calls Check under it; a SQL driver
// whose fence has Statements runs them first in the write's transaction.
type Driver interface {
	// Name is the driver's name, the prefix of every error ("sqlite").
	Name() string
	// Capabilities declares what the storage does itself.
	Capabilities() DriverCapabilities

	// Load returns checkpoint id of (thread, ns) — the greatest id when id
	// is "" — with its rows; nil, nil when it is not stored.
	Load(ctx context.Context, thread, ns, id string) (*StoredCheckpoint, error)
	// Scan yields the checkpoints q selects, newest first (by id, then
	// thread, then namespace), each with its rows. q.Filter is a hint: a
	// driver may skip rows it cannot match, never a row it matches; the
	// engine checks the rest unless DriverCapabilities.ExactFilter.
	Scan(ctx context.Context, q DriverQuery) iter.Seq2[*StoredCheckpoint, error]
	// Threads returns up to limit ids of threads holding a checkpoint,
	// greater than after, ascending.
	Threads(ctx context.Context, after string, limit int) ([]string, error)
	// ThreadInfos yields every thread holding a checkpoint with its count
	// and greatest checkpoint id, most recent first (then by thread id).
	ThreadInfos(ctx context.Context) iter.Seq2[ThreadInfo, error]

	// Put stores p atomically: its value rows (a stored (channel,
	// version) keeps its first value) and its checkpoint row (a checkpoint
	// stored again under its id keeps its first parent). When
	// p.NeedsParent and the parent is not stored at commit, nothing is
	// stored and the error wraps ErrParentMissing.
	Put(ctx context.Context, p *PutRows) error
	// PutWrites stores w's rows atomically: a stored (task, idx) is kept,
	// unless w.Upsert, which replaces it.
	PutWrites(ctx context.Context, w *WriteRows) error
	// Heads is DriverTx.Heads outside a transaction. On a driver that is
	// not Serialized the engine decides what to lock on it (Lock reads
	// the heads again, after the wait), so a removal reads the heads
	// twice, and one with nothing to remove costs one read and no
	// transaction.
	Heads(ctx context.Context, sel HeadSelector) ([]Head, error)
	// DeleteThreads deletes every row of the threads atomically.
	DeleteThreads(ctx context.Context, threads []string) error
	// Update runs fn in one transaction, serialized with every Put and
	// PutWrites: fn's changes are all stored or, when fn or the commit
	// fails, none.
	Update(ctx context.Context, fn func(tx DriverTx) error) error
}

// DriverTx is a Driver's transaction (see Driver.Update). Its methods are
// valid only inside the function given to Update.
type DriverTx interface {
	// Heads returns the head of every checkpoint of the namespaces sel
	// names and, when sel.Orphans, of every orphan write set (writes of a
	// checkpoint id not stored), as the storage holds them now. The
	// engine reads them in a transaction only on a Serialized driver.
	Heads(ctx context.Context, sel HeadSelector) ([]Head, error)
	// Lock takes the checkpoints rs names (not their namespaces) from
	// concurrent puts — a put continuing one of them waits for the
	// transaction, and Lock waits for the puts continuing them that began
	// first — then returns the heads of sel as they are after the wait. A
	// driver whose Update excludes every other writer
	// (DriverCapabilities.Serialized) is never asked.
	Lock(ctx context.Context, rs []Removal, sel HeadSelector) ([]Head, error)
	// Remove deletes, in each removal's namespace, the named checkpoints
	// and their writes (all but the ChannelTasks writes of KeepSends), then
	// the value rows no checkpoint of the namespace still references (a
	// driver may collect such rows of other namespaces of the removals'
	// threads too: they are garbage as well), and counts the rows. With
	// countOnly it deletes nothing and counts what
	// it would. It is the last call of its transaction: the engine returns
	// its error from the function given to Update right after, so a driver
	// may commit with it (PostgreSQL's sends the COMMIT in the same round
	// trip).
	Remove(ctx context.Context, rs []Removal, countOnly bool) (SweepReport, error)
	// DeleteThreads deletes every row of the threads and counts them;
	// with countOnly it only counts.
	DeleteThreads(ctx context.Context, threads []string, countOnly bool) (SweepReport, error)
	// Rows returns every row of thread, nothing opened.
	Rows(ctx context.Context, thread string) (*ThreadRows, error)
	// Put stores p as Driver.Put does.
	Put(ctx context.Context, p *PutRows) error
	// Overwrite stores rows under thread (their Thread fields are
	// ignored), replacing any stored row with the same key: checkpoint,
	// value and write rows.
	Overwrite(ctx context.Context, thread string, rows *ThreadRows) error
	// PutWrites stores w as Driver.PutWrites does.
	PutWrites(ctx context.Context, w *WriteRows) error
	// Fence runs f in the transaction (see Driver).
	Fence(ctx context.Context, f WriteFence) error
}

// DriverCapabilities are what a Driver's storage does itself; the engine
// does the rest.
type DriverCapabilities struct {
	// Serialized: Update excludes every other writer for its duration
	// (one lock, one write transaction at a time), so heads read in it
	// stay true until it ends. Otherwise the engine locks what it is
	// about to remove (DriverTx.Lock), reads the heads again — seeing the
	// puts it waited for — and removes only what it locked.
	Serialized bool
	// InlineParentValues: the driver shares its tables with Python
	// LangGraph, which keeps primitive values inline in the checkpoint
	// document. The engine then sends, with a put continuing a checkpoint,
	// the sealed rows of its unchanged primitive channels
	// (PutRows.Inline), which the driver stores only where the parent's
	// document holds the channel inline at that version.
	InlineParentValues bool
	// DecodedDocuments: the driver keeps PutRows.Checkpoint (copied) and
	// never reads PutRows.Doc, so the engine does not encode documents
	// for it; it returns them as StoredCheckpoint.Decoded.
	DecodedDocuments bool
	// TxRecords: Put and PutWrites insert PutRows.Record and
	// WriteRows.Record in the write's own transaction (a SQL driver). The
	// engine refuses a recorded write on a driver without it rather than
	// store it unrecorded.
	TxRecords bool
	// ReadRecords: Load and Scan insert the read's audit record
	// (ReadRecordOf) in a transaction of their own that holds the read
	// too, and hand nothing read over before it committed; a failed
	// insert fails the read, which then returns no row. A Scan whose
	// Limit is 0 or above MaxRecordedScan commits the record first, then
	// reads (it cannot hold every row until the commit). A driver whose
	// reads may run in a caller's transaction, which commits after the
	// read returns, must not declare it. The engine refuses a recorded
	// read on a driver without it rather than read unrecorded.
	ReadRecords bool
	// ExactFilter: Scan applies DriverQuery.Filter exactly (JSON
	// containment, as LangGraph's `metadata @> filter`), so the engine
	// neither checks it again nor withholds the Limit.
	ExactFilter bool
	// KeepLatest: the Driver is a LatestKeeper, which removes all but the
	// newest checkpoint of each namespace in one call (a storage that
	// runs it as one round trip declares it). The engine then prunes with
	// it instead of reading heads and removing what its rule picks.
	KeepLatest bool
}

// LatestKeeper is a Driver that runs a KeepLatest removal itself (see
// DriverCapabilities.KeepLatest). The rule is the engine's: it says when
// to prune and passes every parameter the driver needs, so the driver
// holds no LangGraph constant.
type LatestKeeper interface {
	// KeepLatest removes, atomically, in every namespace of k.Threads:
	//   - every checkpoint but the newest (greatest id) stored when the
	//     removal begins, with its writes;
	//   - every write set whose checkpoint is not stored when the writes
	//     are removed (an orphan), in any namespace of the threads;
	// except the k.SendsChannel writes of a removed checkpoint (or an
	// orphan) that is the parent of a checkpoint still stored whose
	// format ("v" of its document, a JSON number) is below k.SendsBefore:
	// that checkpoint reads its pending sends from them. Then it removes
	// the value rows of the threads that no stored checkpoint of their
	// namespace references at their version.
	//
	// It is safe against concurrent puts as Lock and Remove together
	// are: a put continuing a checkpoint it removes either commits first,
	// and then the new checkpoint, its writes and the values it
	// references stay, or waits for the removal and fails with
	// ErrParentMissing, storing nothing; the newest checkpoint of a
	// namespace is not locked, so a put continuing it never waits for
	// the removal nor fails because of it. Unknown threads are no error.
	KeepLatest(ctx context.Context, k KeepLatest) error
}

// KeepLatest is a LatestKeeper's removal.
type KeepLatest struct {
	// Threads are the threads pruned, sorted, each once.
	Threads []string
	// SendsChannel is the channel of the writes a checkpoint before
	// format SendsBefore reads from its parent as its pending sends
	// (ChannelTasks).
	SendsChannel string
	// SendsBefore is the first format that keeps its pending sends as
	// its own writes (4).
	SendsBefore int
}

// DriverQuery selects the checkpoints of a Scan.
type DriverQuery struct {
	// Thread, when not "", restricts to one thread.
	Thread string
	// NS, when not nil, restricts to one namespace.
	NS *string
	// ID, when not "", selects that checkpoint id only.
	ID string
	// Before, when not "", selects ids less than it.
	Before string
	// Filter is a metadata containment filter (see Driver.Scan).
	Filter map[string]any
	// Limit, when > 0, caps the checkpoints yielded: the engine takes no
	// more. It is 0 when the engine filters what the driver yields.
	Limit int
}

// StoredCheckpoint is a checkpoint as a driver stores it, nothing opened.
type StoredCheckpoint struct {
	Thread, NS, ID string
	Parent         string // "" for none
	// Doc and Meta are the checkpoint document and metadata, JSON, as Put
	// was given them (or as another LangGraph implementation wrote them).
	Doc, Meta []byte
	// Decoded, when not nil, is what engine.DecodeDocument or
	// engine.DocumentOf returned for Doc: a driver that had to parse the
	// document (to learn its channel versions) or keeps it decoded passes
	// it on, so that it is not parsed again. Opaque to drivers; the
	// engine owns it from here on.
	Decoded any
	// Metadata, when not nil, is Meta decoded (plain JSON values, as
	// jsonvalue.Unmarshal gives them), for a driver that keeps it so: a
	// copy the engine owns from here on.
	Metadata map[string]any
	// Values are the value rows of the document's channel versions that
	// are stored, in any order.
	Values []ValueRow
	// Writes are the checkpoint's writes in (task, idx) order.
	Writes []WriteRow
	// Sends are the parent's ChannelTasks writes in (task path, task, idx)
	// order when the document's format is before 4; nil otherwise.
	Sends []WriteRow
}

// ValueRow is one stored channel value (LangGraph's checkpoint_blobs row).
type ValueRow struct {
	Channel, Version, Type string
	// Data is nil only for Type "empty" (a channel without a value).
	Data []byte
}

// WriteRow is one stored pending write (a checkpoint_writes row).
type WriteRow struct {
	Task, Path string
	Idx        int
	Channel    string
	Type       string
	Data       []byte
}

// PutRows is what a put stores.
type PutRows struct {
	Thread, NS, ID string
	Parent         string // "" for none
	// NeedsParent: the checkpoint inherits values from Parent, which must
	// be stored when the put commits (Driver.Put).
	NeedsParent bool
	// V is the document's format version (the engine decodes documents;
	// a driver that keeps it beside the document may use it for Head.V
	// and Sends).
	V         int
	Doc, Meta []byte
	// Type is the checkpoint row's type column ("" for none), which
	// another LangGraph writer may set: read by DriverTx.Rows and stored
	// again by DriverTx.Overwrite, so that a copy keeps it; a put leaves
	// it empty.
	Type string
	// Versions are the document's channel versions, for a driver that
	// keeps them beside it (SQL drivers read them from the document):
	// the caller's map, which a driver that keeps it clones.
	Versions map[string]string
	// Checkpoint is the caller's checkpoint, for a driver that keeps
	// documents decoded (the memory driver): it copies what it keeps and
	// never modifies it. Nil on rows read back by DriverTx.Rows unless the
	// driver set it there.
	Checkpoint *Checkpoint
	// Values are the rows of the put's new channel versions, by channel.
	Values []ValueRow
	// Inline are rows the parent may hold inline (see
	// DriverCapabilities.InlineParentValues), by channel; nil otherwise.
	Inline []ValueRow
	// Fence is run inside the write (Driver).
	Fence WriteFence
	// Record, when not nil, is the audit record of the put: the driver
	// inserts it in the put's transaction, so that the put and its record
	// commit together or not at all (see RecordRow).
	Record *RecordRow
}

// WriteRows is what a PutWrites stores: the writes of one task.
type WriteRows struct {
	Thread, NS, Checkpoint, Task, Path string
	// Rows are in index order (two writers of the same rows take their
	// locks in one order).
	Rows []WriteRow
	// Upsert: the rows replace stored ones (every write is to a special
	// channel, as LangGraph's WRITES_IDX_MAP).
	Upsert bool
	// Fence is run inside the write (Driver).
	Fence WriteFence
	// Record is as PutRows.Record: inserted in the write's transaction.
	Record *RecordRow
}

// ThreadRows is every row of one thread (DriverTx.Rows).
type ThreadRows struct {
	// Checkpoints are the checkpoint rows (Values, NeedsParent and Fence
	// unused; V and Versions where the driver keeps them).
	Checkpoints []PutRows
	Values      []NamespacedValue
	Writes      []NamespacedWrite
}

// Empty reports whether r holds no row: its thread holds nothing.
func (r *ThreadRows) Empty() bool {
	return len(r.Checkpoints) == 0 && len(r.Values) == 0 && len(r.Writes) == 0
}

// NamespacedValue is a value row with its namespace.
type NamespacedValue struct {
	NS string
	ValueRow
}

// NamespacedWrite is a write row with its namespace and checkpoint id.
type NamespacedWrite struct {
	NS, Checkpoint string
	WriteRow
}

// HeadSelector names the namespaces whose heads DriverTx.Heads returns.
// Exactly one of Threads and RunIDs is set.
type HeadSelector struct {
	// Threads: every namespace of these threads; with NS not nil, only
	// that namespace of each.
	Threads []string
	NS      *string
	// RunIDs: every namespace holding a checkpoint whose metadata run_id
	// is one of these (a JSON string).
	RunIDs []string
	// Orphans: the orphan write sets are wanted too. The engine asks only
	// when its rule removes them (a prune without KeepLatest, an idle
	// thread of a sweep):
	// finding them costs a SQL driver a pass over the writes. A driver
	// may return them regardless.
	Orphans bool
}

// Head is what the engine decides removals on: a checkpoint's coordinates
// and the fields the rules read, or an orphan write set (Stored false).
type Head struct {
	Thread, NS, ID string
	// Stored is false for writes of a checkpoint id that is not stored.
	Stored bool
	// Parent is the parent checkpoint's id. The rules read it only when V
	// is before 4, so a driver may leave it empty from 4 up.
	Parent string
	// V is the document's format version. The rules read only whether it
	// is before 4, so a driver may report any version from 4 up as 4.
	V int
	// RunID is the metadata's run_id when it is a JSON string; a driver
	// may leave it empty unless the selector names RunIDs.
	RunID string
}

// Removal names rows to delete in one namespace (DriverTx.Remove).
type Removal struct {
	Thread, NS string
	// IDs are the checkpoints (and orphan write sets) that go.
	IDs []string
	// KeepSends are ids among IDs whose ChannelTasks writes stay: a kept
	// checkpoint before format 4 reads them as its pending sends.
	KeepSends []string
}

// WriteFence keeps a write of an erased subject's values out (see
// keys.Erase): the keys that sealed a write's rows, checked inside its
// critical section. The engine makes them; drivers only run them.
type WriteFence interface {
	// Check fails, wrapping keys.ErrSubjectErased, when a key that sealed
	// the rows was destroyed.
	Check(ctx context.Context) error
	// Statements are SQL statements to run first in the write's
	// transaction: the key table's fence, when the key table lives in the
	// same database, instead of Check; the data database's erasure guard
	// (keys.ErasureGuard) in any case. ok is false when the key table's
	// fence is not among them: Check must run as well, inside the
	// transaction. On PostgreSQL a statement refuses the write by failing
	// with SQLSTATE keys.FenceSQLState; on SQLite it is a query of one
	// boolean, true when it refuses it (internal/sqlfence).
	Statements() (stmts []FenceStatement, ok bool)
}

// FenceStatement is one statement of a SQL fence, and its arguments.
type FenceStatement struct {
	SQL  string
	Args []any
}

// Blobs returns p's Values and Inline rows together and, for each,
// whether it is one of Inline: sorted by channel when there are Inline
// rows, so that concurrent puts to a thread take their rows' locks in one
// order (Values alone are by channel already).
func (p *PutRows) Blobs() ([]ValueRow, []bool) {
	if len(p.Inline) == 0 {
		return p.Values, make([]bool, len(p.Values))
	}
	rows := slices.SortedFunc(slices.Values(slices.Concat(p.Values, p.Inline)), func(a, b ValueRow) int {
		return strings.Compare(a.Channel, b.Channel)
	})
	inline := make([]bool, len(rows))
	for i, r := range rows {
		inline[i] = slices.ContainsFunc(p.Inline, func(v ValueRow) bool { return v.Channel == r.Channel && v.Version == r.Version })
	}
	return rows, inline
}

// ErrParentMissing is the error a driver returns when p.NeedsParent and
// the parent is not stored: it wraps ErrParentMissing and names the
// checkpoint.
func (p *PutRows) ErrParentMissing() error {
	return fmt.Errorf("%w: checkpoint %q of thread %q (namespace %q) was removed (swept, pruned or deleted) since it was read; "+
		"nothing was stored: read the thread again and continue from what it holds", ErrParentMissing, p.Parent, p.Thread, p.NS)
}

// RecordRow is an audit record that a write inserts in its own
// transaction, when the audit trail lives in the write's database
// (audit.Options.WritesInTx): one commit makes the write and its record
// durable together, and a write that fails rolls its record back. The
// audit package makes it; a SQL driver only inserts it, after the write's
// rows and only when they are stored (a put whose parent is gone stores
// neither).
type RecordRow struct {
	// Table is the table's name, quoted (and qualified) as the driver's
	// SQL needs it.
	Table string
	// Columns are the columns Values go to, in order.
	Columns []string
	// Values are the row's values (text, an int64, or a time.Time).
	Values []any
	// After, when set, returns a query whose row the insert is made from
	// (its FROM clause), its i-th placeholder param(i) holding
	// AfterValues[i]: a lock every other writer of the table takes, or a
	// row that must still be stored, such as the audit trail's
	// appenders' advisory lock and the record a read chains its own
	// record after (audit.ChainRowTable). The query yields one row, or
	// none when the row must not be stored: a driver that can tell then
	// fails the insert with ErrRecordNotStored (the query may fail the
	// statement itself instead). A driver that gives an insert a FROM
	// clause of its own is never handed such a row.
	After func(param func(i int) string) string
	// AfterValues are the values of After's placeholders.
	AfterValues []any
	// Stored, when set, is called by a saver that stores the write
	// carrying the row after its Put or PutWrites returned (the queue of
	// checkpointer/durable), once the transaction that carried the row
	// ended, committed or not: the audit trail arms its chainer then,
	// when the record can be there, not only when Put returned. A saver
	// that stores the write before it returns need not call it: its
	// caller arms the chainer on return.
	Stored func()
}

// ErrRecordNotStored is the error of a read whose audit record's row
// (RecordRow with After) was not inserted: After's query yielded no row.
// Nothing of the read's transaction was stored.
var ErrRecordNotStored = errors.New("checkpointer: the audit record's row was not stored")

// Args are the values of InsertSQL's placeholders, in order: Values,
// then AfterValues.
func (r *RecordRow) Args() []any {
	if len(r.AfterValues) == 0 {
		return r.Values
	}
	return append(r.Values[:len(r.Values):len(r.Values)], r.AfterValues...)
}

// InsertSQL is the INSERT of r's row, INSERT ... SELECT with param(i)
// the placeholder of the i-th value of Args (0-based): "?" for SQLite,
// "$n" for PostgreSQL. A driver may append a FROM clause, so that the row is
// inserted exactly when another statement's row exists.
func (r *RecordRow) InsertSQL(param func(i int) string) string {
	cols, params := make([]string, len(r.Columns)), make([]string, len(r.Values))
	for i, c := range r.Columns {
		cols[i] = `"` + strings.ReplaceAll(c, `"`, `""`) + `"`
	}
	for i := range params {
		params[i] = param(i)
	}
	sql := `INSERT INTO ` + r.Table + ` (` + strings.Join(cols, ", ") + `) SELECT ` + strings.Join(params, ", ")
	if r.After != nil {
		sql += ` FROM (` + r.After(func(i int) string { return param(len(r.Values) + i) }) + `) AS after_`
	}
	return sql
}

type recordKey struct{}

// WithRecord returns ctx carrying r, the audit record of the Put or
// PutWrites called with it: a saver on a driver with TxRecords
// (checkpointer/engine) inserts it in the write's transaction, and any
// other saver must refuse the write (RecordsInTx tells which is which).
func WithRecord(ctx context.Context, r *RecordRow) context.Context {
	return context.WithValue(ctx, recordKey{}, r)
}

// RecordOf returns the record WithRecord put in ctx, or nil.
func RecordOf(ctx context.Context) *RecordRow {
	r, _ := ctx.Value(recordKey{}).(*RecordRow)
	return r
}

type readRecordKey struct{}

// WithReadRecord returns ctx carrying r, the audit record of the GetTuple
// or List called with it: a saver on a driver with ReadRecords inserts it
// in the read's own transaction (one round trip for both) and returns
// what it read only once that transaction committed; any other saver must
// refuse the read (ReadRecorder tells which is which).
func WithReadRecord(ctx context.Context, r *RecordRow) context.Context {
	return context.WithValue(ctx, readRecordKey{}, r)
}

// ReadRecordOf returns the record WithReadRecord put in ctx, or nil.
func ReadRecordOf(ctx context.Context) *RecordRow {
	r, _ := ctx.Value(readRecordKey{}).(*RecordRow)
	return r
}

// MaxRecordedScan is the largest Limit of a Scan that a driver with
// ReadRecords reads in its record's transaction: it holds the rows until
// the commit, so their number must be small.
const MaxRecordedScan = 100

// ReadRecorder is a Saver that inserts a GetTuple's or List's audit record
// (WithReadRecord) in the read's own transaction.
type ReadRecorder interface {
	// RecordsReadsInTx reports whether it does (its driver has
	// ReadRecords).
	RecordsReadsInTx() bool
}

// TxRecorder is a Saver that inserts a Put's or PutWrites' audit record
// (WithRecord) in the write's own transaction.
type TxRecorder interface {
	// RecordsInTx reports whether it does (its driver has TxRecords).
	RecordsInTx() bool
}
