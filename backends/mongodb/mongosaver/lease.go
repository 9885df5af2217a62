package mongosaver

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"slices"
	"sync"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"go.mongodb.org/mongo-driver/v2/mongo/readpref"

	"github.com/memvault/memvault/checkpointer"
)

// Leases serialize the writers of a thread across processes, which share
// no lock and, without multi-document transactions, no server-side one
// either. A lease is one document per thread in memvault_leases,
// {_id: thread, owner, expires}, taken with a conditional upsert: the
// filter matches the thread's document only when it is expired or already
// ours, so while another owner holds it the upsert tries to insert a
// second document with the same _id and the server refuses it (E11000) —
// the holder keeps it and the taker waits and tries again.
//
// A put or a task's pending writes hold their thread's lease from before
// their read to after their write; Update (removals, copies, imports,
// re-encryption) takes the lease of every thread before it reads or
// changes it, and holds them all until it ends. So a removal cannot
// interleave with a put of another process: the put that read the parent
// writes before the removal reads, or reads after it (and fails with
// ErrParentMissing when its parent is gone). Within a process, puts of one
// thread queue on a local lock before the lease, and Update excludes puts
// with the driver's mutex.
//
// A holder that dies leaves its lease until it expires (Options.LeaseTTL);
// a put and an Update renew the leases they hold every third of the TTL
// while they work, and a put keeps its lease after it ends until idle or
// asked for (sticky.go). A renewal that finds a lease no longer ours
// (expired and taken: the process was paused, or the server unreachable,
// longer than the TTL) stops the work with ErrLockLost, and a put confirms
// its lease before it writes its document: its large values may have
// taken longer than the TTL to write (sticky.go's confirm). Expiry is judged on
// each process's clock: clocks must agree to well within the TTL, and a
// process paused longer than the TTL (a stopped VM) may find its lease
// taken — the usual limit of leases without fencing tokens.

const leasesCol = "memvault_leases"

// ErrLeaseBusy is wrapped by the error of an Update that waited too long
// for the lease of a thread while holding others: two processes taking
// the same threads in different orders would otherwise wait for each
// other until their leases expired. The Update is undone (see Update);
// run it again.
var ErrLeaseBusy = errors.New("mongodb: thread lease held by another process")

// ErrLockLost is wrapped by the error of a put, pending writes or Update
// whose lease on a thread ran out and was taken by another process while
// it worked: it stopped rather than interleave with that process. A put
// stopped so stored nothing its checkpoint references; an Update stopped
// so is not undone (the thread is another process's now): run it again.
var ErrLockLost = errors.New("mongodb: the lease on the thread ran out")

// defaultLeaseTTL bounds how long a crashed holder blocks a thread.
const defaultLeaseTTL = 30 * time.Second

type leaser struct {
	coll *mongo.Collection
	// cps, writes and big are the saver's collections, for recover.
	cps, writes, big *mongo.Collection
	owner            string // this process's (driver's) owner id
	ttl              time.Duration
	off              bool

	mu    sync.Mutex
	local map[string]*localLock // thread -> in-process lock
	// sticky: the leases kept between writes (sticky.go); renewing: its
	// renewLoop runs; closed: the Saver closed, nothing is kept.
	sticky   map[string]*sticky
	renewing bool
	closed   bool

	// beforeRelease, when set (tests), runs before an Update releases
	// its leases; an error it returns is the release's (a network
	// failure).
	beforeRelease func() error
	// hook, when set (tests), runs with the thread at "take", before a
	// lease's acquisition is sent, and at "idle", before the renewer
	// lets go of a lease kept idle or asked for.
	hook func(at, thread string)
}

type localLock struct {
	mu sync.Mutex
	n  int
}

func newLeaser(db *mongo.Database, ttl time.Duration, off bool) *leaser {
	var b [8]byte
	_, _ = rand.Read(b[:])
	host, _ := os.Hostname()
	// Read from the primary whatever the client's readPreference: drain
	// must see every lease taken before it looks (a secondary behind
	// the primary would miss a write under way).
	coll := db.Collection(leasesCol, options.Collection().SetReadPreference(readpref.Primary()))
	return &leaser{coll: coll, owner: fmt.Sprintf("%s/%d/%s", host, os.Getpid(), hex.EncodeToString(b[:])),
		ttl: max(ttl, time.Second), off: off, local: map[string]*localLock{}}
}

// lockLocal takes thread's in-process lock; the returned function frees
// it.
func (l *leaser) lockLocal(thread string) func() {
	l.mu.Lock()
	ll := l.local[thread]
	if ll == nil {
		ll = &localLock{}
		l.local[thread] = ll
	}
	ll.n++
	l.mu.Unlock()
	ll.mu.Lock()
	return func() { l.unlockLocal(thread, ll) }
}

// tryLockLocalLocked takes thread's in-process lock when no one holds or
// waits for it; the caller holds l.mu. The returned function (nil when
// the lock was not free) frees it, and must be called without l.mu.
func (l *leaser) tryLockLocalLocked(thread string) func() {
	if l.local[thread] != nil {
		return nil
	}
	ll := &localLock{n: 1}
	ll.mu.Lock()
	l.local[thread] = ll
	return func() { l.unlockLocal(thread, ll) }
}

func (l *leaser) unlockLocal(thread string, ll *localLock) {
	ll.mu.Unlock()
	l.mu.Lock()
	if ll.n--; ll.n == 0 {
		delete(l.local, thread)
	}
	l.mu.Unlock()
}

// hold runs fn holding thread's lease (and its in-process lock). fn gets
// confirm, to call just before its last write: ErrLockLost when the
// lease was lost; and the lease's entry, whose knowledge of the thread's
// checkpoints (putcache.go) is fn's alone while it runs (nil without
// leases). With keep, the lease stays held after fn (sticky.go): the next
// put or pending write of the thread in this process uses it without a
// round trip.
func (l *leaser) hold(ctx context.Context, thread string, keep bool, fn func(ctx context.Context, confirm func(context.Context) error, e *sticky) error) error {
	if l.off {
		return fn(ctx, nil, nil)
	}
	unlock := l.lockLocal(thread)
	defer unlock()
	wctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	e, err := l.use(ctx, thread, cancel)
	if err != nil {
		return err
	}
	err = fn(wctx, func(ctx context.Context) error { return l.confirm(ctx, thread, e) }, e)
	return l.done(context.WithoutCancel(ctx), thread, e, keep, err)
}

// keepRenewed renews the leases held() names every third of the TTL until
// the returned function is called (it waits for a renewal under way, and
// does nothing when called again); lost is called, and renewal stops,
// when one is found lost. A renewal failing otherwise (the server
// unreachable) is tried again at the next tick: the lease may still be
// ours.
func (l *leaser) keepRenewed(ctx context.Context, held func() []string, lost func(error)) (stop func()) {
	quit, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(max(l.ttl/3, time.Millisecond))
		defer tick.Stop()
		for {
			select {
			case <-quit:
				return
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			threads := held()
			if len(threads) == 0 {
				continue
			}
			if err := l.renew(ctx, threads); errors.Is(err, ErrLockLost) {
				lost(err)
				return
			}
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() {
			close(quit)
			<-done
		})
	}
}

// acquire takes thread's lease for l.owner, waiting while another owner
// holds it: at most maxWait when it is not 0 (ErrLeaseBusy). A lease taken
// over from a dead Update that was creating the thread (created: see
// markCreated) first deletes what that Update stored: the thread did not
// exist before it, so it is made absent again.
func (l *leaser) acquire(ctx context.Context, thread string, maxWait time.Duration) error {
	_, _, err := l.take(ctx, thread, maxWait)
	return err
}

// take is acquire returning the lease's token and its expiry by this
// process's clock.
func (l *leaser) take(ctx context.Context, thread string, maxWait time.Duration) (bson.ObjectID, time.Time, error) {
	wait := 2 * time.Millisecond
	start := time.Now()
	for {
		if l.hook != nil {
			l.hook("take", thread)
		}
		now := time.Now()
		token := bson.NewObjectID()
		var prev leaseDoc
		err := l.coll.FindOneAndUpdate(ctx,
			bson.D{{Key: "_id", Value: thread}, {Key: "$or", Value: bson.A{
				bson.D{{Key: "expires", Value: bson.D{{Key: "$lt", Value: now}}}},
				bson.D{{Key: "owner", Value: l.owner}},
			}}},
			// A new token per taking: DrainWrites tells a lease
			// held since before it from one taken since.
			// A request to let go (want) was for the previous
			// holder.
			bson.D{{Key: "$set", Value: bson.D{{Key: "owner", Value: l.owner}, {Key: "expires", Value: now.Add(l.ttl)},
				{Key: "token", Value: token}}}, {Key: "$unset", Value: bson.D{{Key: "want", Value: ""}}}},
			options.FindOneAndUpdate().SetUpsert(true).SetReturnDocument(options.Before)).Decode(&prev)
		if err == nil || errors.Is(err, mongo.ErrNoDocuments) {
			// Ours too: the mark of an Update of this process
			// whose restore failed, or whose recovery did, is
			// only ever seen here by a later taker (an Update
			// does not take again a lease it holds).
			if err == nil && prev.Created {
				return token, now.Add(l.ttl), l.recover(ctx, thread)
			}
			return token, now.Add(l.ttl), nil
		}
		if !mongo.IsDuplicateKeyError(err) {
			return token, now, fmt.Errorf("lease on %s: %w", checkpointer.NameID("thread", thread), err)
		}
		if maxWait > 0 && time.Since(start) > maxWait {
			return token, now, fmt.Errorf("%w: %s", ErrLeaseBusy, checkpointer.NameID("thread", thread))
		}
		// Held by another process: ask it to hand the lease over (a
		// put's lease stays held after the put, sticky.go).
		if err := l.ask(ctx, thread); err != nil {
			return token, now, err
		}
		select {
		case <-ctx.Done():
			return token, now, fmt.Errorf("lease on %s (held by another process): %w", checkpointer.NameID("thread", thread), ctx.Err())
		case <-time.After(wait):
		}
		wait = min(2*wait, 100*time.Millisecond)
	}
}

type leaseDoc struct {
	ID      string    `bson:"_id"`
	Token   any       `bson:"token"`
	Owner   string    `bson:"owner"`
	Expires time.Time `bson:"expires"`
	Created bool      `bson:"created"`
	// Want is a request to let go (sticky.go): the owner id of a
	// process waiting for the lease, or true (DrainWrites).
	Want any `bson:"want,omitempty"`
}

// markCreated records in thread's lease, before an Update's first change
// to it, that the thread did not exist: should the process die before the
// Update ends, the next taker of the lease deletes the thread (acquire).
func (l *leaser) markCreated(ctx context.Context, thread string) error {
	_, err := l.coll.UpdateOne(ctx, bson.D{{Key: "_id", Value: thread}, {Key: "owner", Value: l.owner}},
		bson.D{{Key: "$set", Value: bson.D{{Key: "created", Value: true}}}})
	if err != nil {
		return fmt.Errorf("lease on %s: %w", checkpointer.NameID("thread", thread), err)
	}
	return nil
}

// recover deletes what a dead Update stored of a thread it was creating,
// checkpoints first (a crash in between leaves writes without a
// checkpoint, which reads ignore), then clears the mark. The caller holds
// the lease.
func (l *leaser) recover(ctx context.Context, thread string) error {
	f := bson.D{{Key: fThread, Value: thread}}
	if _, err := l.cps.DeleteMany(ctx, f); err != nil {
		return fmt.Errorf("lease on %s: removing an unfinished import: %w", checkpointer.NameID("thread", thread), err)
	}
	if _, err := l.writes.DeleteMany(ctx, f); err != nil {
		return fmt.Errorf("lease on %s: removing an unfinished import: %w", checkpointer.NameID("thread", thread), err)
	}
	if _, err := l.big.DeleteMany(ctx, f); err != nil {
		return fmt.Errorf("lease on %s: removing an unfinished import: %w", checkpointer.NameID("thread", thread), err)
	}
	_, err := l.coll.UpdateOne(ctx, bson.D{{Key: "_id", Value: thread}, {Key: "owner", Value: l.owner}},
		bson.D{{Key: "$unset", Value: bson.D{{Key: "created", Value: ""}}}})
	if err != nil {
		return fmt.Errorf("lease on %s: %w", checkpointer.NameID("thread", thread), err)
	}
	return nil
}

// recoverAll takes, and releases, every expired lease left marked created
// by a dead Update, so that the threads it was creating are absent before
// anything reads them (Setup).
func (l *leaser) recoverAll(ctx context.Context) error {
	if l.off {
		return nil
	}
	cur, err := l.coll.Find(ctx, bson.D{{Key: "created", Value: true}, {Key: "expires", Value: bson.D{{Key: "$lt", Value: time.Now()}}}})
	if err != nil {
		return fmt.Errorf("leases: %w", err)
	}
	var docs []struct {
		ID string `bson:"_id"`
	}
	if err := cur.All(ctx, &docs); err != nil {
		return fmt.Errorf("leases: %w", err)
	}
	for _, d := range docs {
		if err := l.hold(ctx, d.ID, false, func(context.Context, func(context.Context) error, *sticky) error { return nil }); err != nil {
			return err
		}
	}
	return nil
}

// renew extends the leases of threads l.owner holds: ErrLockLost when one
// of them is no longer ours.
func (l *leaser) renew(ctx context.Context, threads []string) error {
	res, err := l.coll.UpdateMany(ctx, bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: threads}}}, {Key: "owner", Value: l.owner}},
		bson.D{{Key: "$set", Value: bson.D{{Key: "expires", Value: time.Now().Add(l.ttl)}}}})
	if err != nil {
		return fmt.Errorf("renew leases: %w", err)
	}
	if res.MatchedCount < int64(len(threads)) {
		return fmt.Errorf("%w: %d of the leases on threads %q are another process's", ErrLockLost, int64(len(threads))-res.MatchedCount, threads)
	}
	return nil
}

// unmark clears the created marks of threads (markCreated) once the
// Update that set them succeeded, before their leases are released:
// should the release fail, the leases expire with the threads complete,
// not marked for deletion. Tried three times.
func (l *leaser) unmark(ctx context.Context, threads []string) error {
	var err error
	for range 3 {
		_, err = l.coll.UpdateMany(ctx, bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: threads}}}, {Key: "owner", Value: l.owner}},
			bson.D{{Key: "$unset", Value: bson.D{{Key: "created", Value: ""}}}})
		if err == nil {
			return nil
		}
	}
	return fmt.Errorf("leases: clearing the mark of created threads %q: %w", threads, err)
}

// release gives up the leases of threads l.owner holds.
func (l *leaser) release(ctx context.Context, threads []string) error {
	if len(threads) == 0 {
		return nil
	}
	_, err := l.coll.DeleteMany(ctx, bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: threads}}}, {Key: "owner", Value: l.owner}})
	if err != nil {
		return fmt.Errorf("release leases: %w", err)
	}
	return nil
}

// txLeases are the leases an Update holds.
type txLeases struct {
	l       *leaser
	mu      sync.Mutex // held and lost: the renewer (keepRenewed) reads and sets them
	held    []string
	created []string // threads marked created (markCreated)
	lost    error    // ErrLockLost, once a renewal found a lease lost
	renewed time.Time
}

// heldNow is a copy of held, for the renewer.
func (x *txLeases) heldNow() []string {
	x.mu.Lock()
	defer x.mu.Unlock()
	return slices.Clone(x.held)
}

func (x *txLeases) setLost(err error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.lost = err
}

func (x *txLeases) lostErr() error {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.lost
}

// take makes sure the transaction holds thread's lease, renewing those it
// holds when a third of their time has passed.
func (x *txLeases) take(ctx context.Context, thread string) error {
	if x.l.off {
		return nil
	}
	if err := x.lostErr(); err != nil {
		return err
	}
	held := x.heldNow()
	if len(held) > 0 && time.Since(x.renewed) > x.l.ttl/3 {
		if err := x.l.renew(ctx, held); err != nil {
			if errors.Is(err, ErrLockLost) {
				x.setLost(err)
			}
			return err
		}
		x.renewed = time.Now()
	}
	if slices.Contains(held, thread) {
		return nil
	}
	// Kept by a put of this process (none runs during an Update): the
	// Update takes it over and releases it when it ends. The thread's
	// in-process lock keeps the renewer from letting go of the kept
	// lease while the Update takes it (see renewLoop).
	unlock := x.l.lockLocal(thread)
	x.l.forget(thread)
	// Holding others, wait for this one less than they last: two
	// Updates taking threads in different orders give up rather than
	// wait for each other's leases to expire.
	var maxWait time.Duration
	if len(held) > 0 {
		maxWait = x.l.ttl / 3
	}
	err := x.l.acquire(ctx, thread, maxWait)
	unlock()
	if err != nil {
		return err
	}
	x.mu.Lock()
	if len(x.held) == 0 {
		x.renewed = time.Now()
	}
	x.held = append(x.held, thread)
	x.mu.Unlock()
	return nil
}

// releaseAll clears the created marks, then releases the leases.
func (x *txLeases) releaseAll(ctx context.Context) error {
	if x.l.off {
		return nil
	}
	// A failed unmark is still worth the release: releasing deletes
	// the lease, mark and all.
	var uerr error
	if len(x.created) > 0 {
		uerr = x.l.unmark(ctx, x.created)
	}
	if x.l.beforeRelease != nil {
		if err := x.l.beforeRelease(); err != nil {
			return errors.Join(uerr, err)
		}
	}
	return errors.Join(uerr, x.l.release(ctx, x.heldNow()))
}

// release releases the leases, marks and all.
func (x *txLeases) release(ctx context.Context) error {
	if x.l.off {
		return nil
	}
	return x.l.release(ctx, x.heldNow())
}

// drain returns once every lease held when it began (by any process) has
// been released, taken again (a new token) or has expired: every put,
// pending write and Update that held one then has ended, or can no longer
// write (a put confirms its lease before its write). Those begun since
// took their lease after drain began.
func (l *leaser) drain(ctx context.Context) error {
	if l.off {
		return nil
	}
	cur, err := l.coll.Find(ctx, bson.D{{Key: "expires", Value: bson.D{{Key: "$gte", Value: time.Now()}}}})
	if err != nil {
		return fmt.Errorf("leases: %w", err)
	}
	var held []leaseDoc
	if err := cur.All(ctx, &held); err != nil {
		return fmt.Errorf("leases: %w", err)
	}
	if len(held) > 0 {
		// Leases kept between writes (sticky.go) are let go when asked
		// for; a write using one ends first.
		ids := make(bson.A, len(held))
		for i, h := range held {
			ids[i] = h.ID
		}
		if _, err := l.coll.UpdateMany(ctx, bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: ids}}}},
			bson.D{{Key: "$set", Value: bson.D{{Key: "want", Value: true}}}}); err != nil {
			return fmt.Errorf("leases: %w", err)
		}
	}
	wait := 2 * time.Millisecond
	for len(held) > 0 {
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for %d thread leases of writes under way (%s first): %w", len(held), held[0].ID, ctx.Err())
		case <-time.After(wait):
		}
		wait = min(2*wait, 100*time.Millisecond)
		ids := make(bson.A, len(held))
		for i, h := range held {
			ids[i] = h.ID
		}
		cur, err := l.coll.Find(ctx, bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: ids}}}})
		if err != nil {
			return fmt.Errorf("leases: %w", err)
		}
		var now []leaseDoc
		if err := cur.All(ctx, &now); err != nil {
			return fmt.Errorf("leases: %w", err)
		}
		byID := make(map[string]leaseDoc, len(now))
		for _, d := range now {
			byID[d.ID] = d
		}
		t := time.Now()
		held = slices.DeleteFunc(held, func(h leaseDoc) bool {
			d, ok := byID[h.ID]
			return !ok || d.Expires.Before(t) || !sameToken(d.Token, h.Token)
		})
	}
	return nil
}

// sameToken compares two lease tokens as decoded (ObjectIDs; nil for a
// lease written without one).
func sameToken(a, b any) bool {
	x, okx := a.(bson.ObjectID)
	y, oky := b.(bson.ObjectID)
	if okx != oky {
		return false
	}
	return !okx || x == y
}
