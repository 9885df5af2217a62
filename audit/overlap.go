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

// readRecorded runs read while e, the record of a read, commits, and
// returns read's result once the record is durable (not when the record
// fails). Where the trail keeps pending records, the record is queued
// before read runs in the caller's goroutine (Trail.startRead): no
// goroutine of its own per read, and the record is in the queue before
// the read begins, so that concurrent reads' records share an INSERT more
// often (SQLite get_tuple at 16 in flight: ~7 KB written a read, ~2 KB
// since). Elsewhere, whileRecorded with an appended record.
func readRecorded[T any](ctx context.Context, t *Trail, e Entry, read func(context.Context) (T, error)) (T, error) {
	var zero T
	wait, ok, err := t.startRead(ctx, e)
	if !ok {
		return whileRecorded(ctx, func(ctx context.Context) error { return t.LogAll(ctx, []Entry{e}) }, read)
	}
	if err != nil {
		return zero, err
	}
	v, err := read(ctx)
	if rerr := wait(); rerr != nil {
		return zero, rerr
	}
	return v, err
}
