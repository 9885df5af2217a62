package pgaudit

import "context"

// AppendLock is the advisory lock t's appenders take, for tests that
// hold it as a stuck appender would.
func (t *Table) AppendLock(ctx context.Context) (int64, error) { return t.appendLock(ctx, t.pool) }
