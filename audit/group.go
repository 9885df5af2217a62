package audit

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// Group commit. Each audited operation waits for its record to be durable
// before it proceeds, and a table commits one transaction at a time (the
// chain needs the previous record's link), so with one transaction per
// record concurrent operations queue for the table's lock and pay a commit
// each. Instead, records that arrive while a commit runs wait in a queue,
// and the next commit writes all of them in one transaction (one fsync):
// the caller that finds no commit running leads the first batch itself
// (at concurrency 1 nothing changes), and whoever finishes a batch and
// finds the queue non-empty starts a leader for the next one.
//
// Every caller is told its batch's outcome, and is told it only after that
// transaction committed (and the chain's mark, when it is the first): no
// audited operation proceeds on a record that is not durable. A batch
// whose commit fails fails each of its callers and no other; the next
// batch starts afresh from the table's last record, so the chain stays
// gap-free and in order (a batch's records are numbered and linked in the
// order its callers arrived, inside the one transaction that stores them).

// maxBatch bounds how many callers one commit serves, so that one
// transaction stays small when a burst queues thousands.
const maxBatch = 256

// request is one caller's entries waiting for a commit.
type request struct {
	ctx context.Context
	es  []Entry
	who string
	now time.Time

	out  []Record // the records stored for es (a key change first, maybe)
	err  error
	done chan struct{} // closed when out and err are set
}

// group is the queue of a Trail's appenders.
type group struct {
	mu    sync.Mutex
	queue []*request
	busy  bool // a leader is committing (or about to)
	// batches counts the commits attempted, for the tests.
	batches atomic.Int64
}

// append appends es (and a key change record first when needed) and
// returns the records stored, once they are durable.
func (t *Trail) append(ctx context.Context, es []Entry) ([]Record, error) {
	who, err := recordPrincipal(ctx)
	if err != nil {
		return nil, err
	}
	r := &request{ctx: ctx, es: es, who: who, done: make(chan struct{})}
	g := &t.group
	g.mu.Lock()
	// Under the lock: records get their times in the order they are
	// numbered, within a process.
	r.now = t.now().UTC().Truncate(time.Microsecond)
	g.queue = append(g.queue, r)
	lead := !g.busy
	g.busy = true
	g.mu.Unlock()
	if lead {
		t.lead() // r is in the batch it commits
	}
	select {
	case <-r.done:
		return r.out, r.err
	default:
	}
	select {
	case <-r.done:
		return r.out, r.err
	case <-ctx.Done():
		// The record may still be written by its batch (a record of an
		// operation that then did not happen, as when the operation
		// fails after its record): the operation does not proceed.
		return nil, fmt.Errorf("audit: waiting for the record's commit: %w", context.Cause(ctx))
	}
}

// lead commits the queue's first batch, answers its callers, and leaves
// the rest of the queue to a new leader.
func (t *Trail) lead() {
	g := &t.group
	g.mu.Lock()
	n := min(len(g.queue), maxBatch)
	batch := make([]*request, n)
	copy(batch, g.queue)
	g.queue = append(g.queue[:0:0], g.queue[n:]...)
	g.mu.Unlock()

	g.batches.Add(1)
	err := t.commit(batch)
	for _, r := range batch {
		if err != nil {
			r.out, r.err = nil, err
		}
		close(r.done)
	}

	g.mu.Lock()
	more := len(g.queue) > 0
	g.busy = more
	g.mu.Unlock()
	if more {
		// Not this caller: it has its answer and returns now.
		go t.lead()
	}
}

// commit stores batch's records in one transaction, in the callers'
// order, and marks the chain's beginning when it was not yet marked. The
// error is every caller's. On a PendingTable the same transaction chains
// the pending records first (those of writes that recorded in their own
// transactions): whoever appends chains them.
func (t *Trail) commit(batch []*request) error {
	ctx, cancel := batchContext(batch)
	defer cancel()
	if _, ok := t.pendingTable(); ok {
		t.chaining.mu.Lock()
		defer t.chaining.mu.Unlock()
		made := t.chaining.made.Load() // as flushLocked: chained once this commits
		n, err := t.chainPending(ctx, batch)
		for err == nil && n == chainBatch {
			n, err = t.chainPending(ctx, nil)
		}
		if err != nil {
			return err
		}
		t.chaining.failed.Store(nil)
		t.chaining.chained.Store(made)
		return nil
	}
	return t.appendWith(ctx, func(ctx context.Context, chain func(*Record, []Pending) ([]Record, error)) error {
		return t.table.Append(ctx, func(last *Record) ([]Record, error) { return chain(last, nil) })
	}, batch)
}

// appendWith runs one appending transaction (run: the table's Append or
// AppendPending), chaining the pending records it is given, then batch's.
func (t *Trail) appendWith(ctx context.Context, run func(context.Context, func(*Record, []Pending) ([]Record, error)) error, batch []*request) error {
	for attempt := 0; ; attempt++ {
		// Read outside the table's lock (the data database may be
		// another file or connection), before every attempt: a writer
		// must not extend a trail without a hash-chained record once the
		// chain began.
		began, err := t.chainBegan(ctx)
		if err != nil {
			return err
		}
		var chainErr error
		var newHead *Record // the last record stored
		err = run(ctx, func(last *Record, pending []Pending) ([]Record, error) {
			// Table may call chain again when it retries: start over.
			chainErr, newHead = nil, nil
			var all []Record
			defer func() {
				if len(all) > 0 {
					newHead = &all[len(all)-1]
				}
			}()
			add := func(es []Entry, now time.Time, who, pendingID string) ([]Record, error) {
				rs, err := t.chain(last, es, now, who, pendingID, began)
				if err != nil {
					chainErr = err
					return nil, err
				}
				all = append(all, rs...)
				last = &rs[len(rs)-1]
				return rs, nil
			}
			for i := range pending {
				p := &pending[i]
				if err := t.checkPending(p); err != nil {
					chainErr = err
					return nil, err
				}
				if _, err := add([]Entry{{Op: p.Op, Target: p.Target, Subject: p.Subject, KeyID: p.KeyID}}, p.Time, p.Principal, p.ID); err != nil {
					return nil, err
				}
				// A batch's records follow its first, each naming its
				// member id: the table stores them as one row.
				for j, m := range p.More {
					if _, err := add([]Entry{{Op: m.Op, Target: m.Target, Subject: m.Subject, KeyID: m.KeyID}}, m.Time, m.Principal, MemberID(p.ID, j+1)); err != nil {
						return nil, err
					}
				}
			}
			for _, r := range batch {
				rs, err := add(r.es, r.now, r.who, "")
				if err != nil {
					return nil, err
				}
				r.out = rs
			}
			return all, nil
		})
		if errors.Is(chainErr, errCatchUp) && attempt < 8 {
			// The last record is in format 1: find its link outside the
			// table's lock, then try again.
			if err := t.catchUp(ctx); err != nil {
				return err
			}
			continue
		}
		if chainErr != nil {
			return chainErr
		}
		if err != nil {
			return fmt.Errorf("audit: %w", err)
		}
		// The trail now holds a hash-chained record (when this
		// transaction stored one: a chainer may have found nothing to
		// chain): from here on the data database says so. After the commit, so that a crash in
		// between cannot leave a mark without such a record (which would
		// stop every writer); the next append marks it then.
		if newHead != nil && t.meta != nil && !t.began.Load() {
			if err := t.meta.MarkChainBegan(ctx); err != nil {
				return fmt.Errorf("audit: record that the hash chain began: %w", err)
			}
			t.began.Store(true)
		}
		if newHead != nil {
			// Marked first: a read that links its record after this one
			// (chainedReadRow) marks nothing.
			t.noteHead(newHead)
		}
		return nil
	}
}

// batchContext is the context of a batch's commit: the first caller's
// values, cancelled once every caller's context is done — not when one
// caller gives up, which would fail the others' records.
func batchContext(batch []*request) (context.Context, context.CancelFunc) {
	ctxs := make([]context.Context, len(batch))
	for i, r := range batch {
		ctxs[i] = r.ctx
	}
	return sharedContext(ctxs)
}

// sharedContext is the context of a commit serving callers with ctxs:
// the first one's values, cancelled once every one is done.
func sharedContext(ctxs []context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(context.WithoutCancel(ctxs[0]))
	for _, c := range ctxs {
		if c.Done() == nil {
			// A caller that never gives up: neither does the batch.
			return ctx, func() { cancel(nil) }
		}
	}
	left := int64(len(ctxs))
	stops := make([]func() bool, 0, len(ctxs))
	for _, c := range ctxs {
		stops = append(stops, context.AfterFunc(c, func() {
			if atomic.AddInt64(&left, -1) == 0 {
				cancel(context.Cause(c))
			}
		}))
	}
	return ctx, func() {
		for _, stop := range stops {
			stop()
		}
		cancel(nil)
	}
}
