package mongostore

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// The writer lease serializes the write transactions of every process on
// one store. MongoDB-protocol servers may lack multi-document transactions
// (FerretDB has none), so a lock of one process cannot keep another
// process's commit out of a read-then-write (a PutIf, the code index's
// next generation) or out of an erasure's deletion. The lease is one
// document, {_id: "writer", owner, token, expires}, in Collection +
// ".lease", taken with a conditional upsert: the filter matches it only
// when it has expired, so while another process holds it the upsert
// inserts a second document with the same _id and the server refuses it
// (E11000); the taker waits and tries again. Every taking writes a new
// token, which the holder's renewals and its release name.
//
// A write transaction takes the lease at Begin (after this process's
// mutex) and holds it to its end, renewing it every third of the TTL;
// Commit confirms it before its first write — renewing it unless it was
// taken or renewed less than a third of the TTL ago — and fails with
// ErrLeaseLost rather than write when it was lost (the process paused,
// or the server unreachable, longer than the TTL). Taking and releasing
// cost a write transaction two round trips. Expiry is judged on
// each process's clock: clocks must agree to well within the TTL, and a
// process paused longer than the TTL between that confirmation and its
// writes can still write after another took the lease — the limit of
// leases without fencing tokens.

// ErrLeaseLost is wrapped by the error of a write transaction whose
// writer lease ran out and may have been taken by another process while
// it worked: it stored nothing. Run it again.
var ErrLeaseLost = errors.New("mongodb: the store's writer lease ran out")

// ErrDocument is wrapped by a read of an item document memvault cannot use
// as it is (its namespace array disagrees with its namespace_str, or its
// namespace_str holds '.', which no namespace label may).
var ErrDocument = errors.New("mongodb: store: unusable item document")

// ErrTooLarge is wrapped by a put whose item document would be over
// MongoDB's 16 MiB limit (MaxDocumentSize); its batch stores nothing.
var ErrTooLarge = errors.New("mongodb: store: item document too large")

// DefaultLeaseTTL bounds how long a writer that died blocks the store's
// other writers.
const DefaultLeaseTTL = 30 * time.Second

const leaseID = "writer"

type writerLease struct {
	coll *mongo.Collection
	ttl  time.Duration
}

// held is a taken lease: its token, renewed until stop.
type held struct {
	l     *writerLease
	token bson.ObjectID
	quit  chan struct{}
	done  chan struct{}
	mu    sync.Mutex
	lost  bool
	// renewed is when the lease was last taken or renewed: it is ours
	// until renewed + ttl, unless taken from us after that.
	renewed time.Time
}

// acquire takes the lease, waiting while another process holds it.
func (l *writerLease) acquire(ctx context.Context) (*held, error) {
	wait := 2 * time.Millisecond
	token := bson.NewObjectID()
	for {
		now := time.Now()
		_, err := l.coll.UpdateOne(ctx,
			bson.D{{Key: "_id", Value: leaseID}, {Key: "expires", Value: bson.D{{Key: "$lt", Value: now}}}},
			bson.D{{Key: "$set", Value: bson.D{{Key: "token", Value: token}, {Key: "expires", Value: now.Add(l.ttl)}}}},
			options.UpdateOne().SetUpsert(true))
		if err == nil {
			h := &held{l: l, token: token, quit: make(chan struct{}), done: make(chan struct{}), renewed: now}
			go h.keepRenewed()
			return h, nil
		}
		if !mongo.IsDuplicateKeyError(err) {
			return nil, fmt.Errorf("mongodb: writer lease: %w", err)
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("mongodb: writer lease (held by another process): %w", ctx.Err())
		case <-time.After(wait):
		}
		wait = min(2*wait, 50*time.Millisecond)
	}
}

// renew extends the lease: ErrLeaseLost when it is no longer ours.
func (h *held) renew(ctx context.Context) error {
	now := time.Now()
	res, err := h.l.coll.UpdateOne(ctx, bson.D{{Key: "_id", Value: leaseID}, {Key: "token", Value: h.token}},
		bson.D{{Key: "$set", Value: bson.D{{Key: "expires", Value: now.Add(h.l.ttl)}}}})
	if err != nil {
		return fmt.Errorf("mongodb: renew the writer lease: %w", err)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if res.MatchedCount == 0 {
		h.lost = true
		return ErrLeaseLost
	}
	h.renewed = now
	return nil
}

// confirm makes sure the lease is ours before a commit writes:
// ErrLeaseLost when a renewal found it lost. A lease taken or renewed
// less than a third of the TTL ago is ours for two thirds of it still
// (no round trip); an older one is renewed, which finds it lost or keeps
// it.
func (h *held) confirm(ctx context.Context) error {
	h.mu.Lock()
	lost, fresh := h.lost, time.Since(h.renewed) < h.l.ttl/3
	h.mu.Unlock()
	if lost {
		return ErrLeaseLost
	}
	if fresh {
		return nil
	}
	return h.renew(ctx)
}

func (h *held) keepRenewed() {
	defer close(h.done)
	tick := time.NewTicker(max(h.l.ttl/3, time.Millisecond))
	defer tick.Stop()
	for {
		select {
		case <-h.quit:
			return
		case <-tick.C:
		}
		ctx, cancel := context.WithTimeout(context.Background(), h.l.ttl/3+time.Second)
		err := h.renew(ctx)
		cancel()
		if errors.Is(err, ErrLeaseLost) {
			return
		}
	}
}

// release stops the renewals and gives the lease up (when still ours).
func (h *held) release() {
	close(h.quit)
	<-h.done
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	// A release that fails leaves the lease to expire.
	_, _ = h.l.coll.DeleteOne(ctx, bson.D{{Key: "_id", Value: leaseID}, {Key: "token", Value: h.token}})
}
