package mongosaver

// SetAfterPutRead makes every put of s run f between its read and its
// write: the lease test widens that window to race a removal into it.
func SetAfterPutRead(s *Saver, f func()) { s.d.afterPutRead = f }
