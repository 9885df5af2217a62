package audit

import "context"

// whileRecorded runs read while the record of it commits (record, in a
// goroutine of its own), and returns read's result only once the record
// is durable: a read's result reaches the caller only after its record,
// as before, but the read no longer waits for the commit — at several
// operations in flight, a commit (an fsync) costs the read its latency
// once, not on top of it. When the record fails, the read's result is
// dropped and the record's error returned: nothing read goes out
// unaudited. Writes and deletes do not use it: a change must not happen
// unless its record is durable first.
func whileRecorded[T any](ctx context.Context, record func(context.Context) error, read func(context.Context) (T, error)) (T, error) {
	recorded := make(chan error, 1)
	go func() { recorded <- record(ctx) }()
	v, err := read(ctx)
	if rerr := <-recorded; rerr != nil {
		var zero T
		return zero, rerr
	}
	return v, err
}
