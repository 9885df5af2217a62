package pgaudit

// AppendLock is the advisory lock t's appenders take, for tests that
// hold it as a stuck appender would.
func (t *Table) AppendLock() int64 { return t.lock }
