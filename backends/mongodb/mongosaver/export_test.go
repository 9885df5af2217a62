package mongosaver

// SetAfterPutRead makes every put of s run f between its read and its
// write: the lease test widens that window to race a removal into it.
func SetAfterPutRead(s *Saver, f func()) { s.d.afterPutRead = f }

// SetBeforeBigChunks makes s run f before it writes the chunks of each
// new large value: the tests stop a write there, as a crash would.
func SetBeforeBigChunks(s *Saver, f func()) { s.d.beforeBigChunks = f }

// SetBeforeRelease makes s's Updates run f before releasing their
// leases, failing the release with f's error (a network failure).
func SetBeforeRelease(s *Saver, f func() error) { s.d.leases.beforeRelease = f }

// SetRollbackErr makes restoring the threads after a failed Update of s
// fail with err, restoring nothing.
func SetRollbackErr(s *Saver, err error) { s.d.rollbackErr = err }

// LeaseOwner is s's owner id in memvault_leases.
func LeaseOwner(s *Saver) string { return s.d.leases.owner }

// SetWriteHook makes s run f in a put and in pending writes, with the
// thread: at "write" just before the document is written (a put's lease
// confirmed), at "written" just after it, before the write checks the
// erasure guard again; and at "write" before an Update's Overwrite (a
// copy's) writes. The tests stop a write at either point.
func SetWriteHook(s *Saver, f func(at, thread string)) { s.d.writeHook = f }
