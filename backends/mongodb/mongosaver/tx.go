package mongosaver

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/keys"
)

// tx is a DriverTx: writes go to the server at once; Update restores the
// threads a failed function touched from the copies saved here.
type tx struct {
	d      *driver
	direct bool                   // outside Update: nothing is saved, the caller holds the lease
	saved  map[string]*threadDocs // thread -> its documents before the first change
	leases txLeases               // in Update: the leases held
	// check, in a direct put, confirms the lease before the document is
	// written (replaceCP).
	check func(context.Context) error
	// kept, in a direct put, is the thread's lease the put holds (nil
	// without leases): what it knows of the thread saves the put's read
	// (putcache.go).
	kept *sticky
	// fences, in Update, are the fences Fence checked before the writes
	// they cover: Update checks them again once the writes are made (see
	// guardAgain).
	fences []checkpointer.WriteFence
}

// lease takes thread's lease for the transaction (nothing outside one:
// the driver's Put and PutWrites hold it themselves).
func (t *tx) lease(ctx context.Context, thread string) error {
	if t.direct {
		return nil
	}
	return t.leases.take(ctx, thread)
}

type threadDocs struct{ cps, writes, big []bson.Raw }

// touch saves thread's documents before its first change in the
// transaction.
func (t *tx) touch(ctx context.Context, thread string) error {
	if t.direct {
		return nil
	}
	if err := t.lease(ctx, thread); err != nil {
		return err
	}
	if _, ok := t.saved[thread]; ok {
		return nil
	}
	var s threadDocs
	for _, c := range []struct {
		coll *mongo.Collection
		out  *[]bson.Raw
	}{{t.d.cps, &s.cps}, {t.d.writes, &s.writes}, {t.d.big, &s.big}} {
		cur, err := c.coll.Find(ctx, bson.D{{Key: fThread, Value: thread}})
		if err != nil {
			return fmt.Errorf("save %s: %w", checkpointer.NameID("thread", thread), err)
		}
		for cur.Next(ctx) {
			*c.out = append(*c.out, slices.Clone(cur.Current))
		}
		if err := cur.Err(); err != nil {
			return fmt.Errorf("save %s: %w", checkpointer.NameID("thread", thread), err)
		}
		_ = cur.Close(ctx)
	}
	if len(s.cps) == 0 && len(s.writes) == 0 && !t.leases.l.off {
		// A thread this Update creates: absent again if the process
		// dies before the Update ends (lease.go).
		if err := t.leases.l.markCreated(ctx, thread); err != nil {
			return err
		}
		t.leases.created = append(t.leases.created, thread)
	}
	if t.saved == nil {
		t.saved = map[string]*threadDocs{}
	}
	t.saved[thread] = &s
	return nil
}

// rollback puts the saved threads back: writes first, then checkpoints,
// so that a crash during it leaves no checkpoint without its writes.
func (t *tx) rollback(ctx context.Context) error {
	if t.d.rollbackErr != nil {
		return t.d.rollbackErr
	}
	for thread, s := range t.saved {
		f := bson.D{{Key: fThread, Value: thread}}
		if _, err := t.d.cps.DeleteMany(ctx, f); err != nil {
			return err
		}
		if _, err := t.d.writes.DeleteMany(ctx, f); err != nil {
			return err
		}
		if _, err := t.d.big.DeleteMany(ctx, f); err != nil {
			return err
		}
		if len(s.big) > 0 {
			if _, err := t.d.big.InsertMany(ctx, s.big); err != nil {
				return err
			}
		}
		if len(s.writes) > 0 {
			if _, err := t.d.writes.InsertMany(ctx, s.writes); err != nil {
				return err
			}
		}
		if len(s.cps) > 0 {
			if _, err := t.d.cps.InsertMany(ctx, s.cps); err != nil {
				return err
			}
		}
	}
	return nil
}

func (t *tx) Put(ctx context.Context, p *checkpointer.PutRows) error {
	if err := p.Fence.Check(ctx); err != nil {
		return err
	}
	if err := t.lease(ctx, p.Thread); err != nil {
		return err
	}
	// What this process knows of the thread under its lease may stand
	// for the read (putcache.go) — only when nothing else deletes
	// (Options.DangerousAssumeSoleWriter).
	var served bool
	var docs []cpDoc
	var err error
	if t.d.soleWriter {
		if served, docs, err = t.kept.knownFor(p.NS).servedWithoutRead(ctx, t.d, p); err != nil {
			return err
		}
	}
	if !served {
		if docs, err = t.d.putRead(ctx, p); err != nil {
			return err
		}
	}
	if t.d.afterPutRead != nil {
		t.d.afterPutRead()
	}
	var old, parent *cpDoc
	for i := range docs {
		if docs[i].ID == p.ID {
			old = &docs[i]
		}
		if docs[i].ID == p.Parent {
			parent = &docs[i]
		}
	}
	if p.NeedsParent && parent == nil {
		return p.ErrParentMissing()
	}
	// The document holds every value the checkpoint references: the
	// put's new ones and the parent's at the versions it keeps. A value
	// already stored at a (channel, version) keeps its first value.
	// Newest first, each overriding: the oldest document's value wins.
	have := map[chanVersion]checkpointer.ValueRow{}
	known := map[chanVersion]string{}
	for i := range docs {
		bigGens(&docs[i], known)
		rows, err := t.d.fullRows(ctx, &docs[i])
		if err != nil {
			return fmt.Errorf("put: %w", err)
		}
		for _, v := range rows {
			have[chanVersion{v.Channel, v.Version}] = v
		}
	}
	values := make([]checkpointer.ValueRow, 0, len(p.Versions))
	fresh := map[string]bool{}
	for _, v := range p.Values {
		fresh[v.Channel] = true
		if r, ok := have[chanVersion{v.Channel, v.Version}]; ok {
			v = r
		}
		values = append(values, v)
	}
	for ch, ver := range p.Versions {
		if r, ok := have[chanVersion{ch, ver}]; ok && !fresh[ch] {
			values = append(values, r)
		}
	}
	q := *p
	if old != nil {
		q.Parent = old.parent()
	}
	doc, err := t.d.newCPDoc(p.Thread, &q, values, known)
	if err != nil {
		return err
	}
	if err := t.touch(ctx, p.Thread); err != nil {
		return err
	}
	if err := t.d.replaceCP(ctx, doc, t.check); err != nil {
		t.kept.forgetNS(p.NS)
		return err
	}
	if t.d.writeHook != nil {
		t.d.writeHook("written", p.Thread)
	}
	if err := guardAgain(ctx, p.Fence); err != nil {
		if t.direct && errors.Is(err, keys.ErrSubjectErased) {
			t.kept.forgetNS(p.NS)
			if terr := t.d.takeBack(ctx, doc); terr != nil {
				return errors.Join(err, fmt.Errorf("put checkpoint %q: %w", p.ID, terr))
			}
		}
		return err
	}
	if t.kept != nil && t.d.soleWriter { // nothing else reads what it knows
		t.kept.wrote(doc)
	}
	if p.NeedsParent && !t.d.soleWriter {
		return t.d.parentKept(ctx, p, doc)
	}
	return nil
}

// parentKept confirms, after a put stored doc, that its parent is still
// stored, and takes doc back when it is not. The put's read and its write
// are two commands: a thread deleted between them by a writer that takes
// no lease (LangGraph's deleteThread, a deleteMany) is not seen by the
// read, and doc holds the deleted parent's values it inherits. Read again
// after the write, the parent's absence is seen, and a delete landing
// after this read removes doc with the rest of the thread. A process
// killed between the write and taking doc back leaves it stored.
func (d *driver) parentKept(ctx context.Context, p *checkpointer.PutRows, doc *cpDoc) error {
	n, err := d.cps.CountDocuments(ctx, bson.D{{Key: fThread, Value: p.Thread}, {Key: fNS, Value: p.NS}, {Key: fID, Value: p.Parent}},
		options.Count().SetLimit(1))
	if err != nil {
		return fmt.Errorf("put checkpoint %q: parent %q: %w", p.ID, p.Parent, err)
	}
	if n > 0 {
		return nil
	}
	if err := d.takeBack(ctx, doc); err != nil {
		return fmt.Errorf("put checkpoint %q: its parent was deleted meanwhile, and %w", p.ID, err)
	}
	return p.ErrParentMissing()
}

// takeBack deletes doc, which a put has just stored, and the chunks of the
// large values the put wrote for it (other documents do not reference
// them): a put that finds, after its write, that it must not stand.
func (d *driver) takeBack(ctx context.Context, doc *cpDoc) error {
	if _, err := d.cps.DeleteOne(ctx, bson.D{{Key: fThread, Value: doc.Thread}, {Key: fNS, Value: doc.NS}, {Key: fID, Value: doc.ID}}); err != nil {
		return fmt.Errorf("taking it back failed: %w", err)
	}
	var fresh bson.A
	for _, v := range doc.Values {
		if v.Big && doc.bigFresh[v.Channel] {
			fresh = append(fresh, v.G)
		}
	}
	if len(fresh) > 0 {
		if _, err := d.big.DeleteMany(ctx, bson.D{{Key: "thread_id", Value: doc.Thread}, {Key: "gen", Value: bson.D{{Key: "$in", Value: fresh}}}}); err != nil {
			return fmt.Errorf("taking its large values back failed: %w", err)
		}
	}
	return nil
}

// guardAgain runs f once more after the write it fenced was made: the
// erasure guard's second look (doc.go, "The erasure guard"). MongoDB runs
// no transaction to hold the guard's read and the write together, so a
// write whose first check came before an erasure recorded its mark may
// land after the erasure deleted the subject's rows; read after the write,
// the mark is seen, and the write is taken back (a refusal wrapping
// keys.ErrSubjectErased: the caller deletes what it wrote). Other errors
// leave the write in place: only the guard's refusal says it must go.
func guardAgain(ctx context.Context, f checkpointer.WriteFence) error {
	if f == nil {
		return nil
	}
	return f.Check(ctx)
}

// putRead is a put's read: the checkpoint stored under its id, its
// parent, and any checkpoint of the namespace holding one of its new
// (channel, version) keys already (a fork re-using integer versions),
// newest first.
func (d *driver) putRead(ctx context.Context, p *checkpointer.PutRows) ([]cpDoc, error) {
	ids := []string{p.ID}
	if p.Parent != "" && p.Parent != p.ID {
		ids = append(ids, p.Parent)
	}
	sel := bson.A{bson.D{{Key: fID, Value: bson.D{{Key: "$in", Value: ids}}}}}
	if len(p.Values) > 0 {
		keys := make(bson.A, len(p.Values))
		for i, v := range p.Values {
			keys[i] = valueKey(v.Channel, v.Version)
		}
		sel = append(sel, bson.D{{Key: fKeys, Value: bson.D{{Key: "$in", Value: keys}}}})
	}
	docs, err := d.findCPs(ctx, append(nsFilter(p.Thread, p.NS), bson.E{Key: "$or", Value: sel}),
		options.Find().SetSort(bson.D{{Key: fID, Value: -1}}))
	if err != nil {
		return nil, fmt.Errorf("put: %w", err)
	}
	return docs, nil
}

// foreignCheckpoints reads the type and checkpoint binary of the docs
// without memvault_v (Python's and JS's), read without them.
func (d *driver) foreignCheckpoints(ctx context.Context, docs []cpDoc) error {
	type key struct{ thread, ns, id string }
	var or bson.A
	at := map[key]int{}
	for i := range docs {
		if docs[i].V == nil {
			or = append(or, bson.D{{Key: fThread, Value: docs[i].Thread}, {Key: fNS, Value: docs[i].NS}, {Key: fID, Value: docs[i].ID}})
			at[key{docs[i].Thread, docs[i].NS, docs[i].ID}] = i
		}
	}
	if len(or) == 0 {
		return nil
	}
	full, err := d.findCPs(ctx, bson.D{{Key: "$or", Value: or}}, options.Find().SetProjection(bson.D{{Key: fThread, Value: 1}, {Key: fNS, Value: 1},
		{Key: fID, Value: 1}, {Key: fType, Value: 1}, {Key: fCP, Value: 1}}))
	if err != nil {
		return err
	}
	for _, f := range full {
		if i, ok := at[key{f.Thread, f.NS, f.ID}]; ok {
			docs[i].Type, docs[i].CP = f.Type, f.CP
		}
	}
	return nil
}

func (d *driver) findCPs(ctx context.Context, f bson.D, opts ...options.Lister[options.FindOptions]) ([]cpDoc, error) {
	cur, err := d.cps.Find(ctx, f, opts...)
	if err != nil {
		return nil, err
	}
	var docs []cpDoc
	if err := cur.All(ctx, &docs); err != nil {
		return nil, err
	}
	return docs, nil
}

// replaceCP stores doc, replacing the document of its checkpoint: one
// document, written atomically, holding the checkpoint and its values,
// after the new generations of the values moved out of it (big.go). check,
// when not nil, runs between the two: a direct put confirms there that it
// still holds the thread's lease (lease.go).
func (d *driver) replaceCP(ctx context.Context, doc *cpDoc, check func(context.Context) error) error {
	raw := doc.raw
	if raw == nil {
		var err error
		if raw, err = bson.Marshal(doc); err != nil {
			return fmt.Errorf("%w: checkpoint %q: %w", ErrDocument, doc.ID, err)
		}
	}
	if len(raw) > MaxDocumentSize {
		return fmt.Errorf("%w: checkpoint %q of thread %q is %d bytes, over the %d-byte limit of a MongoDB document; nothing was stored",
			ErrTooLarge, doc.ID, doc.Thread, len(raw), MaxDocumentSize)
	}
	if err := d.writeBig(ctx, doc); err != nil {
		return err
	}
	if check != nil {
		if err := check(ctx); err != nil {
			return err
		}
	}
	if d.writeHook != nil {
		d.writeHook("write", doc.Thread)
	}
	_, err := d.cps.ReplaceOne(ctx, bson.D{{Key: fThread, Value: doc.Thread}, {Key: fNS, Value: doc.NS}, {Key: fID, Value: doc.ID}},
		bson.Raw(raw), options.Replace().SetUpsert(true))
	if err != nil {
		return fmt.Errorf("put checkpoint %q: %w", doc.ID, err)
	}
	return nil
}

func (t *tx) PutWrites(ctx context.Context, w *checkpointer.WriteRows) error {
	if err := w.Fence.Check(ctx); err != nil {
		return err
	}
	if len(w.Rows) == 0 {
		return nil
	}
	op := "$setOnInsert"
	if w.Upsert {
		op = "$set"
	}
	models := make([]mongo.WriteModel, len(w.Rows))
	for i, r := range w.Rows {
		data := r.Data
		if data == nil {
			data = []byte{}
		}
		// A write is one document in every layout: over the limit it
		// cannot be stored (its other fields are ids, well under the
		// margin).
		if len(data) > MaxDocumentSize-writeMargin {
			return fmt.Errorf("%w: pending write %d of task %q (thread %q) holds %d bytes, over the %d-byte limit of a MongoDB document; nothing was stored",
				ErrTooLarge, r.Idx, w.Task, w.Thread, len(data), MaxDocumentSize)
		}
		models[i] = mongo.NewUpdateOneModel().SetUpsert(true).
			SetFilter(bson.D{{Key: fThread, Value: w.Thread}, {Key: fNS, Value: w.NS}, {Key: fID, Value: w.Checkpoint},
				{Key: fTask, Value: w.Task}, {Key: fIdx, Value: r.Idx}}).
			SetUpdate(bson.D{{Key: op, Value: bson.D{{Key: fPath, Value: w.Path}, {Key: fChannel, Value: r.Channel},
				{Key: fType, Value: r.Type}, {Key: fValue, Value: bson.Binary{Data: data}}}}})
	}
	if err := t.touch(ctx, w.Thread); err != nil {
		return err
	}
	if t.d.writeHook != nil {
		t.d.writeHook("write", w.Thread)
	}
	// Two upserts of one new key racing both insert; the server refuses
	// the second (E11000) where MongoDB would retry it itself. Run again,
	// the write finds the document and updates it or, for
	// $setOnInsert, keeps it.
	for attempt := 0; ; attempt++ {
		_, err := t.d.writes.BulkWrite(ctx, models, options.BulkWrite().SetOrdered(true))
		if err == nil {
			if t.d.writeHook != nil {
				t.d.writeHook("written", w.Thread)
			}
			return t.writesGuardAgain(ctx, w)
		}
		if !mongo.IsDuplicateKeyError(err) || attempt == 3 {
			return fmt.Errorf("put writes: %w", err)
		}
	}
}

// writesGuardAgain is guardAgain for pending writes just stored: refused,
// outside Update they are deleted (in Update, its restore takes them
// back). A write kept as it was ($setOnInsert) goes too: it is a value of
// the erased subject's, which its erasure deletes.
func (t *tx) writesGuardAgain(ctx context.Context, w *checkpointer.WriteRows) error {
	err := guardAgain(ctx, w.Fence)
	if err == nil || !t.direct || !errors.Is(err, keys.ErrSubjectErased) {
		return err
	}
	idx := make(bson.A, len(w.Rows))
	for i, r := range w.Rows {
		idx[i] = r.Idx
	}
	if _, derr := t.d.writes.DeleteMany(ctx, bson.D{{Key: fThread, Value: w.Thread}, {Key: fNS, Value: w.NS}, {Key: fID, Value: w.Checkpoint},
		{Key: fTask, Value: w.Task}, {Key: fIdx, Value: bson.D{{Key: "$in", Value: idx}}}}); derr != nil {
		return errors.Join(err, fmt.Errorf("put writes of task %q: taking them back failed: %w", w.Task, derr))
	}
	return err
}

// Fence checks f before the writes it covers, and keeps it for Update to
// check again after them (guardAgain).
func (t *tx) Fence(ctx context.Context, f checkpointer.WriteFence) error {
	if err := f.Check(ctx); err != nil {
		return err
	}
	t.fences = append(t.fences, f)
	return nil
}

func (t *tx) Lock(ctx context.Context, _ []checkpointer.Removal, sel checkpointer.HeadSelector) ([]checkpointer.Head, error) {
	return t.Heads(ctx, sel)
}

func (t *tx) Heads(ctx context.Context, sel checkpointer.HeadSelector) ([]checkpointer.Head, error) {
	type nsKey struct{ thread, ns string }
	var scopes []bson.D
	if len(sel.RunIDs) > 0 {
		leaves := make(bson.A, 0, len(sel.RunIDs))
		for _, r := range sel.RunIDs {
			l, err := metadataLeaf(r)
			if err != nil {
				return nil, err
			}
			leaves = append(leaves, l)
		}
		// Metadata stored as one binary (keys that cannot be field
		// names) is matched here, decoded.
		docs, err := t.d.findCPs(ctx, bson.D{{Key: "$or", Value: bson.A{
			bson.D{{Key: fMeta + ".run_id", Value: bson.D{{Key: "$in", Value: leaves}}}},
			bson.D{{Key: fMeta, Value: bson.D{{Key: "$type", Value: "binData"}}}},
		}}}, options.Find().SetProjection(bson.D{{Key: fThread, Value: 1}, {Key: fNS, Value: 1}, {Key: fMeta, Value: 1}}))
		if err != nil {
			return nil, fmt.Errorf("heads: %w", err)
		}
		seen := map[nsKey]bool{}
		for i := range docs {
			d := &docs[i]
			if !slices.Contains(sel.RunIDs, d.runID()) {
				continue
			}
			if k := (nsKey{d.Thread, d.NS}); !seen[k] {
				seen[k] = true
				scopes = append(scopes, nsFilter(d.Thread, d.NS))
			}
		}
	} else {
		for _, th := range sel.Threads {
			f := bson.D{{Key: fThread, Value: th}}
			if sel.NS != nil {
				f = append(f, bson.E{Key: fNS, Value: *sel.NS})
			}
			scopes = append(scopes, f)
		}
	}
	var out []checkpointer.Head
	for _, f := range scopes {
		// The heads stay true while the transaction holds the lease.
		if th, ok := f[0].Value.(string); ok && f[0].Key == fThread {
			if err := t.lease(ctx, th); err != nil {
				return nil, err
			}
		}
		// Heads need no values: memvault's documents say their format
		// (memvault_v); only the others' checkpoints are read for it.
		docs, err := t.d.findCPs(ctx, f, options.Find().SetProjection(bson.D{{Key: fValues, Value: 0}, {Key: fCP, Value: 0},
			{Key: fKeys, Value: 0}, {Key: "metadata_search", Value: 0}}))
		if err != nil {
			return nil, fmt.Errorf("heads: %w", err)
		}
		if err := t.d.foreignCheckpoints(ctx, docs); err != nil {
			return nil, fmt.Errorf("heads: %w", err)
		}
		stored := map[[3]string]bool{}
		for i := range docs {
			d := &docs[i]
			v, err := d.version()
			if err != nil {
				return nil, err
			}
			h := checkpointer.Head{Thread: d.Thread, NS: d.NS, ID: d.ID, Stored: true, Parent: d.parent(), V: v}
			h.RunID = d.runID()
			stored[[3]string{d.Thread, d.NS, d.ID}] = true
			out = append(out, h)
		}
		ws, err := t.d.findWrites(ctx, f, options.Find().SetProjection(bson.D{{Key: fThread, Value: 1}, {Key: fNS, Value: 1}, {Key: fID, Value: 1}}))
		if err != nil {
			return nil, err
		}
		for _, w := range ws {
			k := [3]string{w.Thread, w.NS, w.ID}
			if !stored[k] {
				stored[k] = true
				out = append(out, checkpointer.Head{Thread: w.Thread, NS: w.NS, ID: w.ID})
			}
		}
	}
	return out, nil
}

// removalFilter selects the writes of r that go.
func removalFilter(r checkpointer.Removal) bson.D {
	f := nsFilter(r.Thread, r.NS)
	var plain []string
	for _, id := range r.IDs {
		if !slices.Contains(r.KeepSends, id) {
			plain = append(plain, id)
		}
	}
	if len(r.KeepSends) == 0 {
		return append(f, bson.E{Key: fID, Value: bson.D{{Key: "$in", Value: r.IDs}}})
	}
	return append(f, bson.E{Key: "$or", Value: bson.A{
		bson.D{{Key: fID, Value: bson.D{{Key: "$in", Value: append(plain, "\x00none")}}}},
		bson.D{{Key: fID, Value: bson.D{{Key: "$in", Value: r.KeepSends}}}, {Key: fChannel, Value: bson.D{{Key: "$ne", Value: checkpointer.ChannelTasks}}}},
	}})
}

func (t *tx) Remove(ctx context.Context, rs []checkpointer.Removal, countOnly bool) (checkpointer.SweepReport, error) {
	var rep checkpointer.SweepReport
	for _, r := range rs {
		if err := t.lease(ctx, r.Thread); err != nil {
			return rep, err
		}
		// Values are counted by their keys (memvault_keys names every
		// value of memvault's documents, inline or not); the inline
		// values of Python's and JS's documents go with their documents
		// and are not counted.
		docs, err := t.d.findCPs(ctx, nsFilter(r.Thread, r.NS), options.Find().SetProjection(bson.D{{Key: fID, Value: 1}, {Key: fKeys, Value: 1}, {Key: fBig, Value: 1}}))
		if err != nil {
			return rep, fmt.Errorf("remove: %w", err)
		}
		all, live := map[string]bool{}, map[string]bool{}
		// Any large value in the namespace: the removal collects its
		// unreferenced chunks too (a dead put's).
		big := false
		for _, d := range docs {
			big = big || d.HasBig != nil
			gone := slices.Contains(r.IDs, d.ID)
			if gone {
				rep.Checkpoints++
			}
			for _, k := range d.Keys {
				all[k] = true
				if !gone {
					live[k] = true
				}
			}
		}
		rep.Blobs += int64(len(all) - len(live))
		wf := removalFilter(r)
		n, err := t.d.writes.CountDocuments(ctx, wf)
		if err != nil {
			return rep, fmt.Errorf("remove: %w", err)
		}
		rep.Writes += n
		if countOnly {
			continue
		}
		if err := t.touch(ctx, r.Thread); err != nil {
			return rep, err
		}
		// Checkpoints first: a crash between the two leaves writes
		// without a checkpoint (an orphan write set the next removal
		// takes), never a checkpoint without its writes.
		if _, err := t.d.cps.DeleteMany(ctx, append(nsFilter(r.Thread, r.NS), bson.E{Key: fID, Value: bson.D{{Key: "$in", Value: r.IDs}}})); err != nil {
			return rep, fmt.Errorf("remove: %w", err)
		}
		if _, err := t.d.writes.DeleteMany(ctx, wf); err != nil {
			return rep, fmt.Errorf("remove: %w", err)
		}
		// Large values last: those no remaining checkpoint references.
		if big {
			if err := t.d.collectBig(ctx, r.Thread, r.NS); err != nil {
				return rep, err
			}
		}
	}
	return rep, nil
}

func (t *tx) DeleteThreads(ctx context.Context, threads []string, countOnly bool) (checkpointer.SweepReport, error) {
	var rep checkpointer.SweepReport
	for _, th := range threads {
		if err := t.lease(ctx, th); err != nil {
			return rep, err
		}
		f := bson.D{{Key: fThread, Value: th}}
		docs, err := t.d.findCPs(ctx, f, options.Find().SetProjection(bson.D{{Key: fNS, Value: 1}, {Key: fKeys, Value: 1}, {Key: fBig, Value: 1}}))
		if err != nil {
			return rep, fmt.Errorf("delete thread: %w", err)
		}
		blobs := map[[2]string]bool{}
		for _, d := range docs {
			for _, key := range d.Keys {
				blobs[[2]string{d.NS, key}] = true
			}
		}
		n, err := t.d.writes.CountDocuments(ctx, f)
		if err != nil {
			return rep, fmt.Errorf("delete thread: %w", err)
		}
		rep.Checkpoints += int64(len(docs))
		rep.Blobs += int64(len(blobs))
		rep.Writes += n
		if countOnly {
			continue
		}
		if err := t.touch(ctx, th); err != nil {
			return rep, err
		}
		if _, err := t.d.cps.DeleteMany(ctx, f); err != nil {
			return rep, fmt.Errorf("delete thread: %w", err)
		}
		if _, err := t.d.writes.DeleteMany(ctx, f); err != nil {
			return rep, fmt.Errorf("delete thread: %w", err)
		}
		// Always: chunks of a dead put may exist without any
		// document marking large values.
		if err := t.d.dropBig(ctx, th); err != nil {
			return rep, err
		}
	}
	return rep, nil
}

func (t *tx) Rows(ctx context.Context, thread string) (*checkpointer.ThreadRows, error) {
	if err := t.lease(ctx, thread); err != nil {
		return nil, err
	}
	f := bson.D{{Key: fThread, Value: thread}}
	docs, err := t.d.findCPs(ctx, f)
	if err != nil {
		return nil, fmt.Errorf("rows: %w", err)
	}
	rows := &checkpointer.ThreadRows{}
	seen := map[[3]string]bool{}
	for i := range docs {
		d := &docs[i]
		meta, err := decodeMetadata(d.Meta)
		if err != nil {
			return nil, err
		}
		p, err := d.parse()
		if err != nil {
			return nil, err
		}
		vals, err := t.d.fullRows(ctx, d)
		if err != nil {
			return nil, err
		}
		// The document without values (memvault's form, whatever wrote
		// it): Overwrite puts the values back as a put does.
		rows.Checkpoints = append(rows.Checkpoints, checkpointer.PutRows{Thread: thread, NS: d.NS, ID: d.ID, Parent: d.parent(),
			V: p.dec.V(), Doc: p.doc, Meta: meta, Versions: p.dec.ChannelVersions()})
		for _, v := range vals {
			if k := [3]string{d.NS, v.Channel, v.Version}; !seen[k] {
				seen[k] = true
				rows.Values = append(rows.Values, checkpointer.NamespacedValue{NS: d.NS, ValueRow: v})
			}
		}
	}
	ws, err := t.d.findWrites(ctx, f)
	if err != nil {
		return nil, err
	}
	for i := range ws {
		rows.Writes = append(rows.Writes, checkpointer.NamespacedWrite{NS: ws[i].NS, Checkpoint: ws[i].ID, WriteRow: ws[i].row()})
	}
	return rows, nil
}

func (t *tx) Overwrite(ctx context.Context, thread string, rows *checkpointer.ThreadRows) error {
	if err := t.touch(ctx, thread); err != nil {
		return err
	}
	if t.d.writeHook != nil {
		t.d.writeHook("write", thread)
	}
	// Writes first, checkpoints last: a crash in between leaves writes
	// without a checkpoint, never a checkpoint without its data.
	for _, w := range rows.Writes {
		data := w.Data
		if data == nil {
			data = []byte{}
		}
		doc := writeDoc{Thread: thread, NS: w.NS, ID: w.Checkpoint, Task: w.Task, Path: w.Path, Idx: w.Idx, Channel: w.Channel, Type: w.Type, Value: data}
		_, err := t.d.writes.ReplaceOne(ctx, bson.D{{Key: fThread, Value: thread}, {Key: fNS, Value: w.NS}, {Key: fID, Value: w.Checkpoint},
			{Key: fTask, Value: w.Task}, {Key: fIdx, Value: w.Idx}}, doc, options.Replace().SetUpsert(true))
		if err != nil {
			return fmt.Errorf("overwrite writes: %w", err)
		}
	}
	vals := map[string]map[chanVersion]checkpointer.ValueRow{}
	for _, v := range rows.Values {
		if vals[v.NS] == nil {
			vals[v.NS] = map[chanVersion]checkpointer.ValueRow{}
		}
		vals[v.NS][chanVersion{v.Channel, v.Version}] = v.ValueRow
	}
	given := map[string][]checkpointer.PutRows{}
	for _, c := range rows.Checkpoints {
		given[c.NS] = append(given[c.NS], c)
	}
	nss := map[string]bool{}
	for ns := range vals {
		nss[ns] = true
	}
	for ns := range given {
		nss[ns] = true
	}
	for ns := range nss {
		existing, err := t.d.findCPs(ctx, nsFilter(thread, ns))
		if err != nil {
			return fmt.Errorf("overwrite: %w", err)
		}
		byID := map[string]*cpDoc{}
		hadBig := false
		for i := range existing {
			byID[existing[i].ID] = &existing[i]
			hadBig = hadBig || existing[i].HasBig != nil
		}
		replaced := map[string]bool{}
		// The large values this overwrite stored, by (channel,
		// version): the checkpoints after the first re-use them.
		wrote := map[chanVersion]string{}
		for _, c := range given[ns] {
			versions := c.Versions
			if versions == nil {
				dec, err := (&cpDoc{Type: typeJSON, CP: c.Doc, ID: c.ID}).decoded()
				if err != nil {
					return err
				}
				versions = dec.ChannelVersions()
			}
			var old map[chanVersion]checkpointer.ValueRow
			if e := byID[c.ID]; e != nil {
				old = map[chanVersion]checkpointer.ValueRow{}
				erows, err := t.d.fullRows(ctx, e)
				if err != nil {
					return err
				}
				for _, v := range erows {
					old[chanVersion{v.Channel, v.Version}] = v
				}
			}
			var values []checkpointer.ValueRow
			for ch, ver := range versions {
				k := chanVersion{ch, ver}
				if v, ok := vals[ns][k]; ok {
					values = append(values, v)
				} else if v, ok := old[k]; ok {
					values = append(values, v)
				}
			}
			c.NS = ns
			doc, err := t.d.newCPDoc(thread, &c, values, wrote)
			if err != nil {
				return err
			}
			if err := t.d.replaceCP(ctx, doc, nil); err != nil {
				return err
			}
			bigGens(doc, wrote)
			replaced[c.ID] = true
		}
		// Stored checkpoints not given keep their documents, with the
		// values given at their (channel, version) replaced.
		for id, e := range byID {
			if replaced[id] {
				continue
			}
			erows, err := t.d.fullRows(ctx, e)
			if err != nil {
				return err
			}
			changed := false
			for i, v := range erows {
				if nv, ok := vals[ns][chanVersion{v.Channel, v.Version}]; ok {
					erows[i] = nv
					changed = true
				}
			}
			if !changed {
				continue
			}
			// Its unchanged large values stay where they are.
			known := maps.Clone(wrote)
			for _, v := range e.Values {
				if _, ok := vals[ns][chanVersion{v.Channel, v.Version}]; v.Big && v.G != "" && !ok {
					known[chanVersion{v.Channel, v.Version}] = v.G
				}
			}
			p, err := e.parse()
			if err != nil {
				return err
			}
			meta, err := decodeMetadata(e.Meta)
			if err != nil {
				return err
			}
			nd, err := t.d.newCPDoc(thread, &checkpointer.PutRows{NS: ns, ID: e.ID, Parent: e.parent(), V: p.dec.V(), Doc: p.doc, Meta: meta}, erows, known)
			if err != nil {
				return err
			}
			if err := t.d.replaceCP(ctx, nd, nil); err != nil {
				return err
			}
			for _, v := range nd.Values {
				if _, ok := vals[ns][chanVersion{v.Channel, v.Version}]; ok && v.Big {
					wrote[chanVersion{v.Channel, v.Version}] = v.G
				}
			}
		}
		// The documents reference the new generations now: the
		// replaced ones go (a crash before leaves them, unreferenced,
		// to the next collection).
		if hadBig || len(wrote) > 0 {
			if err := t.d.collectBig(ctx, thread, ns); err != nil {
				return err
			}
		}
	}
	return nil
}
