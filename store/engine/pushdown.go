package engine

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/memvault/memvault/internal/binding"
	"github.com/memvault/memvault/store"
	"github.com/memvault/memvault/store/internal/items"
)

// The optional transaction interfaces below let a SQL driver do in its
// own statements what the engine would otherwise do with more round trips;
// the engine still decides and checks everything. A driver offers one by
// implementing it on its transactions.

// FilterTx is a transaction that can skip, in its own query, rows that
// fail a search's filter (PostgreSQL: JSONB operators on the value
// column), so that a selective filter does not fetch every row. The engine
// pushes a filter down only when values are stored in the clear (a store
// without serializer), and checks every row it gets again.
type FilterTx interface {
	// ScanFilter is DriverTx.Scan that may leave out rows failing filter.
	ScanFilter(ctx context.Context, prefix store.Namespace, now time.Time, withoutVectors bool, after *store.ScanAfter, limit int, filter map[string]any) ([]store.Row, error)
}

// FenceTx is a write transaction that fences its writes itself (see
// store.WriteFence): PostgreSQL queues the fence's statements in the
// write's own transaction, so that an erasure in another process waits for
// it; a storage that commits under a lock of its own checks the fence
// under that lock. The engine hands it the fence of the keys that sealed
// the values it writes, once per write transaction before its writes,
// instead of checking them in this process.
type FenceTx interface {
	// Fence runs f in the transaction, or keeps it to run at Commit,
	// before the writes; a write it refuses fails wrapping
	// keys.ErrSubjectErased, storing nothing.
	Fence(ctx context.Context, f store.WriteFence) error
}

// CondTx is a write transaction that writes a conditional put in one
// statement whose condition is store.PutCondition (PostgreSQL: an INSERT
// that replaces only an expired row, or an UPDATE at the expected
// updated_at), rather than the engine reading the row first: under
// concurrent writers that read would not hold the row. After
// PutCondition(cond) the transaction's next Put is conditional, and fails
// with store.ErrConflict, writing nothing, when cond does not hold.
type CondTx interface {
	PutCondition(cond store.PutCondition)
}

// fence checks, or hands the driver, the fence of a write's sealing keys.
func (e *Engine) fence(ctx context.Context, tx store.DriverTx, f *binding.Fence) error {
	if ftx, ok := tx.(FenceTx); ok {
		return ftx.Fence(ctx, &writeFence{c: e.vals.codec, f: f})
	}
	if e.caps.StatementReads {
		return errStatementReads // a check before the writes would race the erasure
	}
	return e.vals.codec.Check(ctx, f)
}

// writeFence is the store.WriteFence of the keys recorded in f, sealed by
// c: what the engine hands a FenceTx.
type writeFence struct {
	c binding.Codec
	f *binding.Fence
}

func (w *writeFence) Check(ctx context.Context) error { return w.c.Check(ctx, w.f) }

func (w *writeFence) Statements() ([]store.FenceStatement, bool) {
	stmts, ok := w.c.Statements(w.f)
	if len(stmts) == 0 {
		return nil, ok
	}
	out := make([]store.FenceStatement, len(stmts))
	for i, st := range stmts {
		out[i] = store.FenceStatement{SQL: st.SQL, Args: st.Args}
	}
	return out, ok
}

// ErrDriverCaps is the error of a driver whose declared capabilities
// (store.DriverCaps) its transactions do not back: the engine refuses to
// run on it, or refuses the operation that would need what is missing,
// rather than run a rule that would not hold on that storage.
var ErrDriverCaps = errors.New("driver capabilities not backed by its transactions")

// errStatementReads is the error of a driver that declares
// store.DriverCaps.StatementReads without what it requires: a write of
// its transactions cannot depend on their reads.
var errStatementReads = fmt.Errorf("%w: StatementReads without UpsertVersions, CondTx and FenceTx (a write would depend on a read of another snapshot)", ErrDriverCaps)

// pushdown reports whether a search's filter may be pushed to the driver:
// values are plain JSON.
func (e *Engine) pushdown(filter map[string]any) bool {
	return len(filter) > 0 && e.vals.serde == nil && !e.docs
}

// scan is tx.Scan, with the filter pushed down when the driver can.
func (e *Engine) scan(ctx context.Context, tx store.DriverTx, prefix store.Namespace, now time.Time, withoutVectors bool, after *store.ScanAfter, limit int, filter map[string]any) ([]store.Row, error) {
	if ftx, ok := tx.(FilterTx); ok && e.pushdown(filter) {
		return ftx.ScanFilter(ctx, prefix, now, withoutVectors, after, limit, filter)
	}
	return tx.Scan(ctx, prefix, now, withoutVectors, after, limit)
}

// On returns an engine of e's options and state on d: the same driver bound
// to a caller's transaction, say (PostgreSQL's …Tx methods). It runs no
// sweeper and is not closed: e owns both. A function, not a method, so that
// it does not become one of the stores that embed an Engine.
func On(e *Engine, d store.Driver) *Engine {
	c := &Engine{b: e.b, d: d, caps: d.Caps(), vals: e.vals, docs: e.docs, ci: e.ci, cache: e.cache}
	c.front = items.NewFront(e.b, items.Hooks{Batch: c.Batch, ListItems: c.listItems, DeletePrefix: c.deletePrefix})
	return c
}

// EncodeValue is the value column e stores for v at k (for a driver's
// tests).
func EncodeValue(ctx context.Context, e *Engine, k store.RowKey, v map[string]any) ([]byte, error) {
	var f binding.Fence
	return e.vals.Encode(ctx, k, v, &f)
}

// DecodeValue opens a value column of the item at k as e does (for a
// driver's re-embedding, which reads values with their vectors).
func DecodeValue(ctx context.Context, e *Engine, k store.RowKey, raw []byte) (map[string]any, error) {
	return e.vals.Decode(ctx, k, raw)
}
