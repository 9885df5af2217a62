package engine

import (
	"context"

	"github.com/memvault/memvault/store"
)

// Replacer is an optional interface of a store.DriverTx whose storage can
// apply the engine's replace rule in the statement that writes a row, so
// that the engine does not read the row first (on SQLite, one primary-key
// read less per put). Replace stores w as Put does, except that when a row
// is at w's key the stored row keeps that row's Created, and its Updated
// is w.Updated or, when that is not after the replaced row's Updated, the
// replaced row's Updated plus one nanosecond: UpdatedAt names a version
// (store.PutCondition) even within one clock tick. The rule is the
// engine's, stated here; a driver that cannot run it in its write
// statement does not implement Replacer.
type Replacer interface {
	Replace(ctx context.Context, w store.RowWrite) error
}
