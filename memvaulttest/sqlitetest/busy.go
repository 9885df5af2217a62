package sqlitetest

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"modernc.org/sqlite"
)

// busyMillis is the busy_timeout, in milliseconds, BusyTimeout's hook gives
// a new connection; 0: the hook leaves the connection as its DSN set it.
var busyMillis atomic.Int64

// busyHook registers the hook once per process.
var busyHook sync.Once

// BusyTimeout sets to d, until t ends, the busy_timeout of every SQLite
// connection this process opens through the "sqlite" driver of
// modernc.org/sqlite — memvault's own pools among them, whatever their
// DSN says (production code keeps its default of 5 s) — with a connection
// hook of the driver that runs PRAGMA busy_timeout after the DSN's
// pragmas. A connection opened meanwhile keeps d for its life.
//
// It is for tests of several processes sharing a file on a loaded
// machine: a process waiting for the write lock can wait longer than the
// 5 s a starved holder takes to get the CPU back, and would fail with
// SQLITE_BUSY (which such a test asserts no process meets, to catch a
// transaction that fails at once instead of waiting, such as a read
// upgraded to a write). Each process must call it, children included,
// before opening the database.
func BusyTimeout(t testing.TB, d time.Duration) {
	t.Helper()
	busyHook.Do(func() {
		sqlite.RegisterConnectionHook(func(c sqlite.ExecQuerierContext, _ string) error {
			ms := busyMillis.Load()
			if ms == 0 {
				return nil
			}
			if _, err := c.ExecContext(context.Background(), fmt.Sprintf(`PRAGMA busy_timeout = %d`, ms), nil); err != nil {
				return fmt.Errorf("sqlitetest: busy_timeout: %w", err)
			}
			return nil
		})
	})
	busyMillis.Store(max(d.Milliseconds(), 1))
	t.Cleanup(func() { busyMillis.Store(0) })
}
