package mongosaver

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/memvault/memvault/checkpointer"
)

// Sticky leases. Taking, confirming and releasing a thread's lease around
// every put cost three round trips, more than the put's own two (its read
// and its write). So a put or a task's pending writes keep the lease they
// took: the next write of the thread in this process finds it held and
// pays no round trip for it. A goroutine of the leaser (renewLoop), running
// while any lease is kept, renews them every third of the TTL, reads them
// every stickyPoll to see whether one was lost or asked for, and lets go
// of a lease
//
//   - asked for: a process whose take found the lease held writes its
//     owner id in the lease's want field (ask), DrainWrites writes true;
//     the holder hands the lease over to the asker (owner set to the
//     asker's, so that the steady writer cannot take it back before the
//     asker retries) or, for true, deletes it — once the write using it,
//     if any, has ended;
//   - idle longer than a third of the TTL, or beyond maxSticky kept;
//   - when the Saver closes, or an Update of this process takes it.
//
// The confirmation before a put's write (it may have worked longer than
// the TTL) is a look at the clock: a lease whose expiry, set by this
// process from its clock before sending the acquisition or renewal, is
// more than a third of the TTL away cannot have been taken by anyone
// (clocks agree to well within the TTL, lease.go's assumption); only a
// lease closer to its end, or found lost by the renewer, is confirmed with
// a round trip. What is kept: a removal, a copy or an import of another
// process still cannot interleave with a put (it waits for the hand-over,
// which comes after the put's write), DrainWrites still waits for every
// write that found keys live (it asks every lease held to be let go, and a
// hand-over writes a new token), and a put whose lease ran out still stops
// with ErrLockLost. What it costs: another process waits for a kept lease
// up to stickyPoll (plus the write in flight) instead of not at all, and a
// process that kept leases and dies holds them until they expire, as one
// dying during a put always did; a process of a memvault before sticky
// leases does not ask, and waits until the holder's lease is idle.

// stickyPoll bounds how long a request to let go waits for the holder to
// see it.
func (l *leaser) stickyPoll() time.Duration {
	return min(max(l.ttl/6, 10*time.Millisecond), 200*time.Millisecond)
}

// maxSticky caps the leases one process keeps between writes.
const maxSticky = 256

// sticky is a lease this process holds for puts and pending writes.
type sticky struct {
	token   bson.ObjectID
	expires time.Time // by this process's clock: sent time of the last acquisition or renewal + TTL
	used    time.Time // when its last write ended
	inUse   bool      // a put or pending write holds it now
	lost    bool      // the renewer found it another process's
	want    any       // a request to let go (the asker's owner id, or true)
	cancel  context.CancelCauseFunc
	// known is what this process knows of the thread's checkpoints, by
	// namespace, while it holds this lease (putcache.go). Only the write
	// holding the lease (hold, under the thread's in-process lock) reads
	// or changes it; a lease taken again is a new entry, knowing nothing.
	known map[string]*putCache
}

// use returns thread's kept lease when it can serve a write (not lost, not
// asked for, not near its end), or takes the lease; either way marked in
// use, cancel stopping the write should the renewer find it lost. The
// caller holds thread's in-process lock.
func (l *leaser) use(ctx context.Context, thread string, cancel context.CancelCauseFunc) (*sticky, error) {
	l.mu.Lock()
	e := l.sticky[thread]
	if e != nil {
		if !e.lost && e.want == nil && time.Until(e.expires) > l.ttl/3 {
			e.inUse, e.cancel = true, cancel
			l.mu.Unlock()
			return e, nil
		}
		delete(l.sticky, thread)
	}
	l.mu.Unlock()
	if e != nil && !e.lost && e.want != nil {
		// Asked for: hand it over first, then queue for it again.
		if err := l.letGo(ctx, thread, e); err != nil {
			return nil, err
		}
	}
	token, expires, err := l.take(ctx, thread, 0)
	if err != nil {
		return nil, err
	}
	e = &sticky{token: token, expires: expires, inUse: true, cancel: cancel}
	l.mu.Lock()
	if l.sticky == nil {
		l.sticky = map[string]*sticky{}
	}
	l.sticky[thread] = e
	if !l.renewing {
		l.renewing = true
		go l.renewLoop()
	}
	l.mu.Unlock()
	return e, nil
}

// confirm is a write's check, just before it writes, that it still holds
// thread's lease e: free while the lease is far from its end (see above),
// a renewal otherwise.
func (l *leaser) confirm(ctx context.Context, thread string, e *sticky) error {
	l.mu.Lock()
	lost, expires := e.lost, e.expires
	l.mu.Unlock()
	if lost {
		return fmt.Errorf("%w: %s", ErrLockLost, checkpointer.NameID("thread", thread))
	}
	if time.Until(expires) > l.ttl/3 {
		return nil
	}
	sent := time.Now()
	res, err := l.coll.UpdateOne(ctx, bson.D{{Key: "_id", Value: thread}, {Key: "owner", Value: l.owner}, {Key: "token", Value: e.token}},
		bson.D{{Key: "$set", Value: bson.D{{Key: "expires", Value: sent.Add(l.ttl)}}}})
	if err != nil {
		return fmt.Errorf("renew lease on %s: %w", checkpointer.NameID("thread", thread), err)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if res.MatchedCount == 0 {
		e.lost = true
		return fmt.Errorf("%w: %s", ErrLockLost, checkpointer.NameID("thread", thread))
	}
	e.expires = sent.Add(l.ttl)
	return nil
}

// done ends a write's use of e: the lease is kept (keep), or let go when
// asked for, over maxSticky, closing or not to be kept. err is the
// write's; a lost lease is not let go (it is another process's).
func (l *leaser) done(ctx context.Context, thread string, e *sticky, keep bool, err error) error {
	l.mu.Lock()
	e.inUse, e.cancel, e.used = false, nil, time.Now()
	lost := e.lost
	drop := lost || !keep || e.want != nil || l.closed || len(l.sticky) > maxSticky
	if drop && l.sticky[thread] == e {
		delete(l.sticky, thread)
	}
	l.mu.Unlock()
	if lost {
		// A write done without an error confirmed the lease before its
		// last write: the loss came after.
		if err != nil {
			return errors.Join(err, fmt.Errorf("%w: %s", ErrLockLost, checkpointer.NameID("thread", thread)))
		}
		return nil
	}
	if drop {
		if rerr := l.letGo(ctx, thread, e); rerr != nil && err == nil {
			err = rerr
		}
	}
	return err
}

// letGo gives up the kept lease e of thread: to the process that asked
// for it (a new token), or deleted. The filter names e's token: a lease
// this process took again since is not touched.
func (l *leaser) letGo(ctx context.Context, thread string, e *sticky) error {
	f := bson.D{{Key: "_id", Value: thread}, {Key: "owner", Value: l.owner}, {Key: "token", Value: e.token}}
	var err error
	if to, ok := e.want.(string); ok && to != "" && to != l.owner {
		// The asker takes it within its next try; should it have gone
		// away, the hand-over expires soon.
		_, err = l.coll.UpdateOne(ctx, f, bson.D{
			{Key: "$set", Value: bson.D{{Key: "owner", Value: to}, {Key: "token", Value: bson.NewObjectID()},
				{Key: "expires", Value: time.Now().Add(min(l.ttl/3, 2*time.Second))}}},
			{Key: "$unset", Value: bson.D{{Key: "want", Value: ""}}}})
	} else {
		_, err = l.coll.DeleteOne(ctx, f)
	}
	if err != nil {
		return fmt.Errorf("release lease on %s: %w", checkpointer.NameID("thread", thread), err)
	}
	return nil
}

// ask requests thread's lease from its holder (see above).
func (l *leaser) ask(ctx context.Context, thread string) error {
	_, err := l.coll.UpdateOne(ctx, bson.D{{Key: "_id", Value: thread}, {Key: "owner", Value: bson.D{{Key: "$ne", Value: l.owner}}},
		{Key: "want", Value: bson.D{{Key: "$ne", Value: l.owner}}}},
		bson.D{{Key: "$set", Value: bson.D{{Key: "want", Value: l.owner}}}})
	if err != nil {
		return fmt.Errorf("lease on %s: asking its holder: %w", checkpointer.NameID("thread", thread), err)
	}
	return nil
}

// forget drops thread's kept lease from the map without a round trip: an
// Update of this process (which excludes its writes) takes it over.
func (l *leaser) forget(thread string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if e := l.sticky[thread]; e != nil && !e.inUse {
		delete(l.sticky, thread)
	}
}

// releaseKept lets go of every kept lease not in use (Close, and
// DrainWrites, which excludes this process's writes first).
func (l *leaser) releaseKept(ctx context.Context) error {
	l.mu.Lock()
	kept := map[string]*sticky{}
	for th, e := range l.sticky {
		if !e.inUse {
			kept[th] = e
			delete(l.sticky, th)
		}
	}
	l.mu.Unlock()
	var errs []error
	for th, e := range kept {
		if !e.lost {
			errs = append(errs, l.letGo(ctx, th, e))
		}
	}
	return errors.Join(errs...)
}

// close lets go of the kept leases and keeps no more.
func (l *leaser) close(ctx context.Context) error {
	if l.off {
		return nil
	}
	l.mu.Lock()
	l.closed = true
	l.mu.Unlock()
	return l.releaseKept(ctx)
}

// renewLoop renews, watches and lets go of the kept leases (see above)
// until none is left.
func (l *leaser) renewLoop() {
	ctx := context.Background()
	renewed := time.Now()
	for {
		time.Sleep(l.stickyPoll())
		l.mu.Lock()
		if len(l.sticky) == 0 {
			l.renewing = false
			l.mu.Unlock()
			return
		}
		snap := make(map[string]*sticky, len(l.sticky))
		ids := make(bson.A, 0, len(l.sticky))
		for th, e := range l.sticky {
			snap[th] = e
			ids = append(ids, th)
		}
		l.mu.Unlock()
		if time.Since(renewed) >= l.ttl/3 {
			sent := time.Now()
			res, err := l.coll.UpdateMany(ctx, bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: ids}}}, {Key: "owner", Value: l.owner}},
				bson.D{{Key: "$set", Value: bson.D{{Key: "expires", Value: sent.Add(l.ttl)}}}})
			// Not all matched: one was lost, found below; the others'
			// expiry is left as it was (a write confirms it then).
			if err == nil {
				renewed = sent
				if res.MatchedCount == int64(len(ids)) {
					l.mu.Lock()
					for _, e := range snap {
						e.expires = sent.Add(l.ttl)
					}
					l.mu.Unlock()
				}
			}
		}
		cur, err := l.coll.Find(ctx, bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: ids}}}})
		var docs []leaseDoc
		if err == nil {
			err = cur.All(ctx, &docs)
		}
		if err != nil {
			continue // the server unreachable: the leases may still be ours
		}
		byID := make(map[string]leaseDoc, len(docs))
		for _, d := range docs {
			byID[d.ID] = d
		}
		type freed struct {
			e      *sticky
			unlock func()
		}
		free := map[string]freed{}
		l.mu.Lock()
		for th, e := range snap {
			if l.sticky[th] != e {
				continue // let go, or taken again, since the snapshot
			}
			d, ok := byID[th]
			if !ok || d.Owner != l.owner || !sameToken(d.Token, e.token) {
				e.lost = true
				if e.inUse {
					e.cancel(fmt.Errorf("%w: %s", ErrLockLost, checkpointer.NameID("thread", th)))
				} else {
					delete(l.sticky, th)
				}
				continue
			}
			if d.Want != nil {
				e.want = d.Want
			}
			if !e.inUse && (e.want != nil || time.Since(e.used) > l.ttl/3 || l.closed) {
				// Let go holding the thread's in-process lock, and not
				// at all while a write of this process holds or waits
				// for it (that write uses the lease next): its taking
				// of the lease must not overlap the letting go. A
				// server whose findAndModify is not atomic (FerretDB's
				// finds, then updates by _id) would otherwise answer
				// the taking as done while the deletion removed the
				// document: the write would go on holding no lease and
				// be stopped with ErrLockLost.
				if unlock := l.tryLockLocalLocked(th); unlock != nil {
					delete(l.sticky, th)
					free[th] = freed{e, unlock}
				}
			}
		}
		l.mu.Unlock()
		for th, f := range free {
			if l.hook != nil {
				l.hook("idle", th)
			}
			_ = l.letGo(ctx, th, f.e) // failed: it expires
			f.unlock()
		}
	}
}
