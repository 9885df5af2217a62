package mongosaver

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"iter"
	"maps"
	"slices"
	"sync"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/memvault/memvault/checkpointer"
)

// driver is checkpointer.Driver over the two collections. MongoDB-protocol
// servers may lack multi-document transactions (FerretDB has none; Python's
// saver uses none), so the driver relies on single-document atomicity and
// on the order of its writes, and serializes removals with the puts of
// this process with mu (see doc.go).
type driver struct {
	cps, writes *mongo.Collection
	big         *mongo.Collection // values too large for their document (big.go)
	// mu: puts and pending writes hold it shared, Update exclusively.
	mu sync.RWMutex
	// jsLayout: metadata is written as JS's MongoDBSaver writes it
	// (Options.JSLayout).
	jsLayout bool
	// soleWriter: a kept lease's knowledge may stand for a put's read
	// (Options.DangerousAssumeSoleWriter).
	soleWriter bool
	// leases serialize a thread's writers across processes (lease.go).
	leases *leaser
	// afterPutRead, when set (tests), runs in a put between its read and
	// its write.
	afterPutRead func()
	// beforeBigChunks, when set (tests), runs before each batch of
	// chunks of new large values is written (big.go).
	beforeBigChunks func()
	// writeHook, when set (tests), runs in a put and in pending writes
	// with the thread: at "write" just before the document is written
	// (a put's lease confirmed), at "written" just after, before the
	// write checks the erasure guard again; and at "write" before an
	// Update's Overwrite writes. The tests stop a write
	// there, as a process paused longer than the lease's TTL would be.
	writeHook func(at, thread string)
	// rollbackErr, when set (tests), is what restoring the threads after
	// a failed Update returns, nothing restored.
	rollbackErr error
}

var _ checkpointer.Driver = (*driver)(nil)

func newDriver(db *mongo.Database) *driver {
	return &driver{cps: db.Collection(checkpts), writes: db.Collection(writesCol), big: db.Collection(bigCol)}
}

func (*driver) Name() string { return "mongodb" }

// Capabilities: Serialized holds in one process only (doc.go).
func (*driver) Capabilities() checkpointer.DriverCapabilities {
	return checkpointer.DriverCapabilities{Serialized: true}
}

type chanVersion struct{ channel, version string }

func nsFilter(thread, ns string) bson.D {
	return bson.D{{Key: fThread, Value: thread}, {Key: fNS, Value: ns}}
}

func (d *driver) Load(ctx context.Context, thread, ns, id string) (*checkpointer.StoredCheckpoint, error) {
	f := nsFilter(thread, ns)
	if id != "" {
		f = append(f, bson.E{Key: fID, Value: id})
	}
	var doc cpDoc
	err := d.cps.FindOne(ctx, f, options.FindOne().SetSort(bson.D{{Key: fID, Value: -1}})).Decode(&doc)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("load: %w", err)
	}
	return d.complete(ctx, &doc)
}

// complete is doc as the engine reads it, with its writes and, before
// format 4, its parent's pending sends.
func (d *driver) complete(ctx context.Context, doc *cpDoc) (*checkpointer.StoredCheckpoint, error) {
	ws, err := d.findWrites(ctx, append(nsFilter(doc.Thread, doc.NS), bson.E{Key: fID, Value: doc.ID}))
	if err != nil {
		return nil, err
	}
	return d.stored(ctx, doc, ws)
}

// stored is doc with its writes ws and, before format 4, its parent's
// pending sends.
func (d *driver) stored(ctx context.Context, doc *cpDoc, ws []writeDoc) (*checkpointer.StoredCheckpoint, error) {
	rows, err := d.fullRows(ctx, doc)
	if err != nil {
		return nil, err
	}
	st, err := doc.stored(rows)
	if err != nil {
		return nil, err
	}
	slices.SortFunc(ws, func(a, b writeDoc) int { return cmp.Or(cmp.Compare(a.Task, b.Task), cmp.Compare(a.Idx, b.Idx)) })
	for i := range ws {
		st.Writes = append(st.Writes, ws[i].row())
	}
	v, err := doc.version()
	if err != nil {
		return nil, err
	}
	if v < 4 && st.Parent != "" {
		sends, err := d.findWrites(ctx, append(nsFilter(doc.Thread, doc.NS), bson.E{Key: fID, Value: st.Parent},
			bson.E{Key: fChannel, Value: checkpointer.ChannelTasks}))
		if err != nil {
			return nil, err
		}
		slices.SortFunc(sends, func(a, b writeDoc) int {
			return cmp.Or(cmp.Compare(a.Path, b.Path), cmp.Compare(a.Task, b.Task), cmp.Compare(a.Idx, b.Idx))
		})
		st.Sends = []checkpointer.WriteRow{}
		for i := range sends {
			st.Sends = append(st.Sends, sends[i].row())
		}
	}
	return st, nil
}

func (d *driver) findWrites(ctx context.Context, f bson.D, opts ...options.Lister[options.FindOptions]) ([]writeDoc, error) {
	cur, err := d.writes.Find(ctx, f, opts...)
	if err != nil {
		return nil, fmt.Errorf("read writes: %w", err)
	}
	var ws []writeDoc
	if err := cur.All(ctx, &ws); err != nil {
		return nil, fmt.Errorf("read writes: %w", err)
	}
	return ws, nil
}

func (d *driver) Scan(ctx context.Context, q checkpointer.DriverQuery) iter.Seq2[*checkpointer.StoredCheckpoint, error] {
	return func(yield func(*checkpointer.StoredCheckpoint, error) bool) {
		f := bson.D{}
		if q.Thread != "" {
			f = append(f, bson.E{Key: fThread, Value: q.Thread})
		}
		if q.NS != nil {
			f = append(f, bson.E{Key: fNS, Value: *q.NS})
		}
		switch {
		case q.ID != "" && q.Before != "":
			f = append(f, bson.E{Key: fID, Value: bson.D{{Key: "$eq", Value: q.ID}, {Key: "$lt", Value: q.Before}}})
		case q.ID != "":
			f = append(f, bson.E{Key: fID, Value: q.ID})
		case q.Before != "":
			f = append(f, bson.E{Key: fID, Value: bson.D{{Key: "$lt", Value: q.Before}}})
		}
		opt := options.Find().SetSort(bson.D{{Key: fID, Value: -1}, {Key: fThread, Value: 1}, {Key: fNS, Value: 1}})
		if q.Limit > 0 {
			opt.SetLimit(int64(q.Limit))
		}
		cur, err := d.cps.Find(ctx, f, opt)
		if err != nil {
			yield(nil, fmt.Errorf("list: %w", err))
			return
		}
		defer func() { _ = cur.Close(context.WithoutCancel(ctx)) }()
		// A page at a time: the documents the cursor holds, and their
		// writes in one query.
		var page []cpDoc
		for cur.Next(ctx) {
			var doc cpDoc
			if err := cur.Decode(&doc); err != nil {
				yield(nil, fmt.Errorf("%w: list: %w", ErrDocument, err))
				return
			}
			page = append(page, doc)
			if cur.RemainingBatchLength() > 0 && len(page) < scanPage {
				continue
			}
			if !d.yieldPage(ctx, page, yield) {
				return
			}
			page = page[:0]
		}
		if err := cur.Err(); err != nil {
			yield(nil, fmt.Errorf("list: %w", err))
			return
		}
		if len(page) > 0 {
			d.yieldPage(ctx, page, yield)
		}
	}
}

// scanPage caps the checkpoints whose writes one query reads.
const scanPage = 64

// yieldPage yields page's checkpoints, reading their writes in one
// query; false when the caller stops or on an error.
func (d *driver) yieldPage(ctx context.Context, page []cpDoc, yield func(*checkpointer.StoredCheckpoint, error) bool) bool {
	type nsKey struct{ thread, ns string }
	ids := map[nsKey][]string{}
	var order []nsKey
	for i := range page {
		k := nsKey{page[i].Thread, page[i].NS}
		if ids[k] == nil {
			order = append(order, k)
		}
		ids[k] = append(ids[k], page[i].ID)
	}
	var or bson.A
	for _, k := range order {
		or = append(or, append(nsFilter(k.thread, k.ns), bson.E{Key: fID, Value: bson.D{{Key: "$in", Value: ids[k]}}}))
	}
	f := bson.D{{Key: "$or", Value: or}}
	if len(or) == 1 {
		f = or[0].(bson.D)
	}
	ws, err := d.findWrites(ctx, f)
	if err != nil {
		yield(nil, err)
		return false
	}
	byCP := map[[3]string][]writeDoc{}
	for _, w := range ws {
		k := [3]string{w.Thread, w.NS, w.ID}
		byCP[k] = append(byCP[k], w)
	}
	for i := range page {
		st, err := d.stored(ctx, &page[i], byCP[[3]string{page[i].Thread, page[i].NS, page[i].ID}])
		if !yield(st, err) || err != nil {
			return false
		}
	}
	return true
}

// Threads returns the threads holding a checkpoint after after,
// ascending, at most limit (threadsAfter).
func (d *driver) Threads(ctx context.Context, after string, limit int) ([]string, error) {
	ids, err := threadsAfter(ctx, d.cps, after, limit)
	if err != nil {
		return nil, fmt.Errorf("threads: %w", err)
	}
	return ids, nil
}

// RowThreads implements engine.RowThreads: the threads holding any
// document — a checkpoint, a pending write, a chunk of a large value —
// after after, ascending, at most limit: the first limit of each
// collection (threadsAfter), merged. A thread whose checkpoints are gone
// (a removal killed between its deletes, which take checkpoints first, or
// a writer that stored pending writes before its checkpoint) is among
// them, which Threads misses, so that an erasure (vault.Handle.Forget,
// through engine.Saver.RowThreadIDs) leaves no document of the subject,
// and re-encryption no old envelope.
func (d *driver) RowThreads(ctx context.Context, after string, limit int) ([]string, error) {
	var all []string
	for _, c := range []*mongo.Collection{d.cps, d.writes, d.big} {
		ids, err := threadsAfter(ctx, c, after, limit)
		if err != nil {
			return nil, fmt.Errorf("threads of %s: %w", c.Name(), err)
		}
		all = append(all, ids...)
	}
	slices.Sort(all)
	all = slices.Compact(all)
	return all[:min(limit, len(all))], nil
}

// threadsAfter returns the distinct thread ids of c's documents after
// after, ascending, at most limit. It reads what it returns: finds of
// {thread_id: {$gt: x}} sorted by thread_id (the prefix of every index
// of the collections it reads), projected to thread_id, limited to the ids
// still missing; a thread with more documents than that takes another
// find after it. (A distinct has no limit: it read every id after after
// for each page, N²/limit over a pass, in one reply MongoDB caps at
// 16 MiB.) FerretDB v1 does not push the sort down to its backend; the
// result is the same.
func threadsAfter(ctx context.Context, c *mongo.Collection, after string, limit int) ([]string, error) {
	var ids []string
	for len(ids) < limit {
		want := limit - len(ids)
		cur, err := c.Find(ctx, bson.D{{Key: fThread, Value: bson.D{{Key: "$gt", Value: after}}}},
			options.Find().SetSort(bson.D{{Key: fThread, Value: 1}}).
				SetProjection(bson.D{{Key: fThread, Value: 1}, {Key: "_id", Value: 0}}).
				SetLimit(int64(want)).SetBatchSize(int32(min(want, 1024))))
		if err != nil {
			return nil, err
		}
		n := 0
		for cur.Next(ctx) {
			n++
			id, ok := cur.Current.Lookup(fThread).StringValueOK()
			if !ok {
				_ = cur.Close(ctx)
				return nil, fmt.Errorf("%w: a document of %s has no string thread_id", ErrDocument, c.Name())
			}
			if len(ids) == 0 || ids[len(ids)-1] != id {
				ids = append(ids, id)
			}
		}
		err = cur.Err()
		_ = cur.Close(ctx)
		if err != nil {
			return nil, err
		}
		if n < want || len(ids) == 0 {
			break // no document after the last
		}
		after = ids[len(ids)-1]
	}
	return ids, nil
}

func (d *driver) ThreadInfos(ctx context.Context) iter.Seq2[checkpointer.ThreadInfo, error] {
	return func(yield func(checkpointer.ThreadInfo, error) bool) {
		// Counted here: FerretDB v1 lacks $max in $group and returns 0
		// for a second $sum.
		cur, err := d.cps.Find(ctx, bson.D{}, options.Find().SetProjection(bson.D{{Key: fThread, Value: 1}, {Key: fID, Value: 1}}))
		if err != nil {
			yield(checkpointer.ThreadInfo{}, fmt.Errorf("threads: %w", err))
			return
		}
		infos := map[string]*checkpointer.ThreadInfo{}
		for cur.Next(ctx) {
			var doc struct {
				Thread string `bson:"thread_id"`
				ID     string `bson:"checkpoint_id"`
			}
			if err := cur.Decode(&doc); err != nil {
				yield(checkpointer.ThreadInfo{}, fmt.Errorf("%w: threads: %w", ErrDocument, err))
				return
			}
			ti := infos[doc.Thread]
			if ti == nil {
				ti = &checkpointer.ThreadInfo{ThreadID: doc.Thread}
				infos[doc.Thread] = ti
			}
			ti.Checkpoints++
			ti.LatestCheckpointID = max(ti.LatestCheckpointID, doc.ID)
		}
		if err := cur.Err(); err != nil {
			yield(checkpointer.ThreadInfo{}, fmt.Errorf("threads: %w", err))
			return
		}
		out := slices.SortedFunc(maps.Values(infos), func(a, b *checkpointer.ThreadInfo) int {
			return cmp.Or(cmp.Compare(b.LatestCheckpointID, a.LatestCheckpointID), cmp.Compare(a.ThreadID, b.ThreadID))
		})
		for _, ti := range out {
			if !yield(*ti, nil) {
				return
			}
		}
	}
}

func (d *driver) Put(ctx context.Context, p *checkpointer.PutRows) error {
	d.mu.RLock()
	defer d.mu.RUnlock()
	return d.leases.hold(ctx, p.Thread, true, func(ctx context.Context, confirm func(context.Context) error, e *sticky) error {
		// The lease is confirmed still ours after the large values and
		// before the document.
		return (&tx{d: d, direct: true, check: confirm, kept: e}).Put(ctx, p)
	})
}

func (d *driver) PutWrites(ctx context.Context, w *checkpointer.WriteRows) error {
	if len(w.Rows) == 0 {
		return w.Fence.Check(ctx)
	}
	d.mu.RLock()
	defer d.mu.RUnlock()
	return d.leases.hold(ctx, w.Thread, true, func(ctx context.Context, _ func(context.Context) error, _ *sticky) error {
		return (&tx{d: d, direct: true}).PutWrites(ctx, w)
	})
}

func (d *driver) Heads(ctx context.Context, sel checkpointer.HeadSelector) ([]checkpointer.Head, error) {
	d.mu.RLock()
	defer d.mu.RUnlock()
	return (&tx{d: d, direct: true}).Heads(ctx, sel)
}

func (d *driver) DeleteThreads(ctx context.Context, threads []string) error {
	return d.Update(ctx, func(t checkpointer.DriverTx) error {
		_, err := t.DeleteThreads(ctx, threads, false)
		return err
	})
}

// Update runs fn holding mu exclusively and, from before it reads or
// changes a thread until it ends, that thread's lease (lease.go), renewed
// every third of the TTL. Its writes go to the server as they are made;
// when fn fails, the threads it touched are restored from the copies
// taken before their first change (doc.go says what this does not
// cover). When the restore fails the leases are not released: they
// expire, and the next taker of a thread this Update was creating
// deletes it (lease.go). When a lease was lost (ErrLockLost) nothing is
// restored: the thread is another process's.
func (d *driver) Update(ctx context.Context, fn func(tx checkpointer.DriverTx) error) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	t := &tx{d: d, leases: txLeases{l: d.leases}}
	stop := func() {}
	if !d.leases.off {
		stop = d.leases.keepRenewed(context.WithoutCancel(ctx), t.leases.heldNow, t.leases.setLost)
	}
	defer stop() // should fn not return (a test's simulated crash)
	err := fn(t)
	for _, f := range t.fences {
		if err != nil {
			break
		}
		// The erasure guard again, the writes made (guardAgain): a
		// refusal restores the threads below, taking the writes back.
		err = guardAgain(ctx, f)
	}
	stop()
	if lost := t.leases.lostErr(); lost != nil {
		return errors.Join(err, lost)
	}
	if err != nil {
		if rbErr := t.rollback(context.WithoutCancel(ctx)); rbErr != nil {
			return errors.Join(err, fmt.Errorf("mongodb: restoring the threads after the failure (their leases are left to expire): %w", rbErr))
		}
		// Restored: a thread this Update was creating is absent again,
		// so its mark can go with its lease.
		if rerr := t.leases.release(context.WithoutCancel(ctx)); rerr != nil {
			return errors.Join(err, rerr)
		}
		return err
	}
	return t.leases.releaseAll(context.WithoutCancel(ctx))
}
