package mongovault

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"go.mongodb.org/mongo-driver/v2/mongo/readpref"

	"github.com/memvault/memvault/vault"
)

// The erasure lock (vault.ErasureLock) on MongoDB is a lease: one document
// of memvault_meta per key table, {_id: "erasure_lock:<key>", token,
// owner, expires}, taken by a conditional upsert whose filter matches it
// only once expired (while another holder's lease runs, the upsert tries
// to insert a second document with the same _id and the server refuses
// it, E11000), renewed every third of the lease while held, and deleted
// by its token on release. Only single-document operations: FerretDB has
// no transactions.
//
// Why a lease and not a session: MongoDB has no lock that belongs to a
// connection or a session (nothing like PostgreSQL's advisory locks; a
// logical session's expiry releases nothing), so the only lock that dies
// with its holder is one the holder must keep renewing. A holder killed
// blocks Forgets, and leaves its intent to Opens, until its lease expires
// (DefaultEraseLease; the URI parameter EraseLeaseParam).
//
// Expiry is judged by the server's clock: the taker and the renewer read
// the server's time (hello's localTime) just before their write and set
// expires from it, and the taker's filter compares with it. FerretDB
// evaluates neither $$NOW nor $expr, so the time is read in a round trip
// of its own; being read before the write, it is slightly early, which
// makes a lease last a little longer, never shorter. A jump of a client's
// clock changes nothing; a jump of the server's clock forward expires
// leases early (a live holder's next renewal, or its Forget's check before
// its next step, then finds the lease taken and stops with the erasure
// lock lost), a jump backward makes a dead holder's lease last longer.
// A holder paused longer than the lease (a stopped VM) finds its lease
// taken when it resumes: its Forget stops at its next check.

// EraseLeaseParam is the URI parameter of memvault's own
// ("mongodb://host/db?memvault_erase_lease=10s") that sets how long the
// erasure lock's lease lasts unrenewed: how long a killed Forget blocks
// the next one. A Go duration from 100ms to 1h; DefaultEraseLease when
// absent. Removed before the URI reaches the driver.
const EraseLeaseParam = "memvault_erase_lease"

// DefaultEraseLease is the erasure lock's lease when the URI sets none.
const DefaultEraseLease = 30 * time.Second

// eraseLockPrefix begins the _id of an erasure lock's lease in metaCol.
const eraseLockPrefix = "erasure_lock:"

// eraseLock is the database's vault.ErasureLock.
type eraseLock struct {
	db    *mongo.Database
	coll  *mongo.Collection // metaCol, read from the primary
	lease time.Duration
	owner string // host/pid, for an operator reading the document
}

func newEraseLock(db *mongo.Database, coll *mongo.Collection, lease time.Duration) eraseLock {
	host, _ := os.Hostname()
	return eraseLock{db: db, coll: coll, lease: lease, owner: fmt.Sprintf("%s/%d", host, os.Getpid())}
}

// serverNow returns the server's clock (hello's localTime; isMaster's on
// a server older than hello), asked of the primary.
func (l eraseLock) serverNow(ctx context.Context) (time.Time, error) {
	var r struct {
		LocalTime time.Time `bson:"localTime"`
	}
	err := l.db.RunCommand(ctx, bson.D{{Key: "hello", Value: 1}}, options.RunCmd().SetReadPreference(readpref.Primary())).Decode(&r)
	var ce mongo.CommandError
	if errors.As(err, &ce) && ce.Code == 59 { // CommandNotFound: before MongoDB 4.4.2
		err = l.db.RunCommand(ctx, bson.D{{Key: "isMaster", Value: 1}}, options.RunCmd().SetReadPreference(readpref.Primary())).Decode(&r)
	}
	if err != nil {
		return time.Time{}, fmt.Errorf("mongovault: the server's time: %w", err)
	}
	if r.LocalTime.IsZero() {
		return time.Time{}, errors.New("mongovault: the server's time: hello returned no localTime")
	}
	return r.LocalTime, nil
}

// TryLock implements vault.ErasureLock.
func (l eraseLock) TryLock(ctx context.Context, key string) (vault.HeldErasureLock, bool, error) {
	now, err := l.serverNow(ctx)
	if err != nil {
		return nil, false, err
	}
	var b [16]byte
	_, _ = rand.Read(b[:])
	token := hex.EncodeToString(b[:])
	id := eraseLockPrefix + key
	_, err = l.coll.UpdateOne(ctx, bson.D{{Key: "_id", Value: id}, {Key: "expires", Value: bson.D{{Key: "$lt", Value: now}}}},
		bson.D{{Key: "$set", Value: bson.D{{Key: "token", Value: token}, {Key: "owner", Value: l.owner}, {Key: "expires", Value: now.Add(l.lease)}}}},
		options.UpdateOne().SetUpsert(true))
	if mongo.IsDuplicateKeyError(err) { // held, and not expired
		return nil, false, nil
	}
	if err != nil {
		// The upsert may have landed though its reply did not (ctx's
		// deadline, a dropped connection): take back a lease this
		// token may hold, or it would block every forget until it
		// expires with no one holding it.
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		_, _ = l.coll.DeleteOne(dctx, bson.D{{Key: "_id", Value: id}, {Key: "token", Value: token}})
		return nil, false, fmt.Errorf("mongovault: the erasure lock's lease: %w", err)
	}
	h := &heldLease{l: l, id: id, token: token, quit: make(chan struct{}), done: make(chan struct{})}
	go h.keepRenewed()
	return h, true, nil
}

// heldLease is a lease taken, renewed until released.
type heldLease struct {
	l         eraseLock
	id, token string
	quit      chan struct{}
	done      chan struct{}
	once      sync.Once
	mu        sync.Mutex
	lost      error // set once a renewal found the lease another's
}

// errLeaseLost says the lease is no longer this holder's.
var errLeaseLost = errors.New("mongovault: the erasure lock's lease expired and was taken, or was removed")

// renew extends the lease from the server's time now: errLeaseLost when
// the document no longer holds this holder's token.
func (h *heldLease) renew(ctx context.Context) error {
	h.mu.Lock()
	lost := h.lost
	h.mu.Unlock()
	if lost != nil {
		return lost
	}
	now, err := h.l.serverNow(ctx)
	if err != nil {
		return err
	}
	res, err := h.l.coll.UpdateOne(ctx, bson.D{{Key: "_id", Value: h.id}, {Key: "token", Value: h.token}},
		bson.D{{Key: "$set", Value: bson.D{{Key: "expires", Value: now.Add(h.l.lease)}}}})
	if err != nil {
		return fmt.Errorf("mongovault: renew the erasure lock's lease: %w", err)
	}
	if res.MatchedCount == 0 {
		h.mu.Lock()
		h.lost = errLeaseLost
		h.mu.Unlock()
		return errLeaseLost
	}
	return nil
}

// keepRenewed renews the lease every third of it until released or lost.
// A renewal failing otherwise (the server unreachable) is tried again at
// the next tick: the lease may still be ours, and Check tells.
func (h *heldLease) keepRenewed() {
	defer close(h.done)
	tick := time.NewTicker(max(h.l.lease/3, time.Millisecond))
	defer tick.Stop()
	for {
		select {
		case <-h.quit:
			return
		case <-tick.C:
		}
		ctx, cancel := context.WithTimeout(context.Background(), max(h.l.lease/3, time.Second))
		err := h.renew(ctx)
		cancel()
		if errors.Is(err, errLeaseLost) {
			return
		}
	}
}

// Check implements vault.HeldErasureLock: a renewal, so that the lease
// is this holder's for a whole lease from now (by the server's clock),
// unless the process pauses longer than that.
func (h *heldLease) Check(ctx context.Context) error {
	return h.renew(ctx)
}

// Release implements vault.HeldErasureLock: the renewals stop and the
// lease is deleted by its token (a lease another took is left alone).
func (h *heldLease) Release() {
	h.once.Do(func() {
		close(h.quit)
		<-h.done
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		// Failing, the lease expires by itself.
		_, _ = h.l.coll.DeleteOne(ctx, bson.D{{Key: "_id", Value: h.id}, {Key: "token", Value: h.token}})
	})
}
