package mongostore

import (
	"context"
	"errors"
	"strings"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/memvault/memvault/store"
	"github.com/memvault/memvault/store/engine"
	"github.com/memvault/memvault/store/vecindex"
)

// The code index's data (package vecindex, driven by the engine), in
// three collections beside the items (Collection + ".index",
// ".index_log", ".index_snapshot") and the codes in the vector documents:
//
//   - one state document (_id "state"): the generation, the generation
//     the codes are complete for, the log's floor, the snapshot's
//     generation, the codes' centre and their coverage;
//   - a log document per changed item per generation ({gen,
//     namespace_str, key}, or {gen, full: true});
//   - the snapshot's parts ({part, size, data}, 1 MiB each).
//
// A write transaction's changes to them are made at Commit after its
// items and vectors, the state last: a reader that reads the state, then
// codes, sees codes at least as new as the state, which the log's replay
// then reads again (the index never misses a change; it may read one
// twice). Without multi-document transactions this holds because every
// write transaction, in any process, holds the store's writer lease
// (lease.go) from before it reads the state to after it writes it: the
// next generation is numbered from the state as the last writer left it.

const (
	// logKeep is how many generations the log keeps: a process further
	// behind reloads every code.
	logKeep = 512
	// maxLogItems bounds the log documents of one transaction: one that
	// changes more items logs a full marker.
	maxLogItems = 1024
	stateID     = "state"
)

// floatBudget is engine.Options.FloatBytes: a store whose vectors fit
// scores them from an exact in-process copy. A variable so that the tests
// of the code index can turn the copy off.
var floatBudget int64 = 32 << 20

// indexState is the state document.
type indexState struct {
	Gen      int64  `bson:"gen"`
	CodesGen int64  `bson:"codes_gen"`
	LogFloor int64  `bson:"log_floor"`
	SnapGen  int64  `bson:"snapshot_gen"`
	Centre   []byte `bson:"centre"`
	Items    int64  `bson:"code_items"`
	Sum      int64  `bson:"code_sum"`
	Known    bool   `bson:"coverage_known"`
	centre   []float32
}

// readState reads the state document; a store without one is empty, at
// generation 0, its (no) codes complete and counted.
func (d *driver) readState(ctx context.Context) (indexState, error) {
	st := indexState{SnapGen: -1, Known: true}
	err := d.index.FindOne(ctx, bson.D{{Key: "_id", Value: stateID}}).Decode(&st)
	if errors.Is(err, mongo.ErrNoDocuments) {
		err = nil
	}
	st.centre, _ = decodeVector(st.Centre)
	return st, err
}

func (st indexState) coverage() vecindex.StoredCoverage {
	return vecindex.StoredCoverage{Cov: vecindex.Coverage{Items: st.Items, Sum: uint64(st.Sum)}, Known: st.Known}
}

// idxWrite is a write transaction's bookkeeping of the code index.
type idxWrite struct {
	prev    indexState
	cov     vecindex.StoredCoverage // prev's, plus this transaction's changes
	gen     int64                   // Bump's (0: not bumped)
	keys    []store.RowKey
	full    bool
	deleted bool // an item went: the snapshot (its names) goes
	recode  *recode
	commit  []func()
}

// recode is a Recode the engine asked for, run at Commit after the
// transaction's vectors are written.
type recode struct {
	centre []float32
	code   func([]float32) []byte
}

// idx returns the transaction's bookkeeping, reading the state at the
// first need.
func (t *tx) idx(ctx context.Context) (*idxWrite, error) {
	if !t.write {
		return nil, errReadOnly
	}
	if t.iw != nil {
		return t.iw, nil
	}
	st, err := t.d.readState(ctx)
	if err != nil {
		return nil, err
	}
	t.iw = &idxWrite{prev: st, cov: st.coverage()}
	return t.iw, nil
}

func (t *tx) IndexState(ctx context.Context) (vecindex.State, error) {
	st, err := t.d.readState(ctx)
	if err != nil {
		return vecindex.State{}, err
	}
	q := vecindex.State{Gen: st.Gen, CodesGen: st.CodesGen, LogFloor: st.LogFloor, Stored: st.coverage()}
	if st.SnapGen >= 0 {
		n, err := t.d.snaps.CountDocuments(ctx, bson.D{})
		if err != nil {
			return q, err
		}
		q.SnapshotGone = n == 0
	}
	return q, nil
}

func (t *tx) Quant(ctx context.Context) ([]float32, int64, error) {
	if t.write {
		w, err := t.idx(ctx)
		if err != nil {
			return nil, 0, err
		}
		return w.prev.centre, w.prev.SnapGen, nil
	}
	st, err := t.d.readState(ctx)
	return st.centre, st.SnapGen, err
}

func (t *tx) Changed(ctx context.Context, since int64, limit int) ([]store.RowKey, bool, error) {
	cur, err := t.d.log.Find(ctx, bson.D{{Key: "gen", Value: bson.D{{Key: "$gt", Value: since}}}})
	if err != nil {
		return nil, false, err
	}
	defer cur.Close(ctx)
	seen := map[store.RowKey]bool{}
	var keys []store.RowKey
	for cur.Next(ctx) {
		var doc struct {
			NSStr *string `bson:"namespace_str"`
			Key   string  `bson:"key"`
			Full  bool    `bson:"full"`
		}
		if err := cur.Decode(&doc); err != nil {
			return nil, false, err
		}
		if doc.Full || doc.NSStr == nil {
			return nil, true, nil
		}
		k := store.RowKey{NS: strings.ReplaceAll(*doc.NSStr, sep, "."), Key: doc.Key}
		if !seen[k] {
			if len(keys) == limit {
				return nil, true, nil
			}
			seen[k] = true
			keys = append(keys, k)
		}
	}
	return keys, false, cur.Err()
}

// codeDoc is a vector document's code as read.
type codeDoc struct {
	NSStr   string `bson:"namespace_str"`
	Key     string `bson:"key"`
	Updated int64  `bson:"memvault_updated"`
	Code    []byte `bson:"code"`
}

var codeProjection = bson.D{{Key: fNSStr, Value: 1}, {Key: fKey, Value: 1}, {Key: fMVUpdated, Value: 1}, {Key: fCode, Value: 1}}

func (t *tx) Codes(ctx context.Context, keys []store.RowKey, fn func(store.RowKey, int64, []byte)) error {
	for start := 0; start < len(keys); start += 200 {
		f, n := keysCond(keys[start:min(len(keys), start+200)])
		if n == 0 {
			continue
		}
		cur, err := t.d.vecs.Find(ctx, f, options.Find().SetProjection(codeProjection))
		if err != nil {
			return err
		}
		for cur.Next(ctx) {
			var doc codeDoc
			if err := cur.Decode(&doc); err != nil {
				cur.Close(ctx)
				return err
			}
			if doc.Code != nil {
				fn(store.RowKey{NS: strings.ReplaceAll(doc.NSStr, sep, "."), Key: doc.Key}, doc.Updated, doc.Code)
			}
		}
		err = cur.Err()
		cur.Close(ctx)
		if err != nil {
			return err
		}
	}
	return nil
}

func (t *tx) AllCodes(ctx context.Context, fn func(ns, key []byte, updated int64, code []byte) bool) error {
	// namespace_str sorts as the dotted names do (no label holds '.' or
	// '/'), an item's codes together.
	cur, err := t.d.vecs.Find(ctx, bson.D{{Key: fCode, Value: bson.D{{Key: "$exists", Value: true}}}},
		options.Find().SetProjection(codeProjection).SetSort(bson.D{{Key: fNSStr, Value: 1}, {Key: fKey, Value: 1}}))
	if err != nil {
		return err
	}
	defer cur.Close(ctx)
	for cur.Next(ctx) {
		var doc codeDoc
		if err := cur.Decode(&doc); err != nil {
			return err
		}
		if !fn([]byte(strings.ReplaceAll(doc.NSStr, sep, ".")), []byte(doc.Key), doc.Updated, doc.Code) {
			return nil
		}
	}
	return cur.Err()
}

// SnapshotSize implements vecindex.Source: the sizes stored with the
// parts, but never more than the parts can hold — the index reserves
// memory by this number, and stored sizes alone (damaged or hostile)
// made a 300-item store's first search allocate 550 MiB. vecindex cuts
// its parts at about 1 MiB (a part ends with the code that crosses it),
// so no honest part reaches maxSnapshotPart; FerretDB has no $binarySize
// to sum the real bytes on the server.
func (t *tx) SnapshotSize(ctx context.Context) (int64, error) {
	cur, err := t.d.snaps.Find(ctx, bson.D{}, options.Find().SetProjection(bson.D{{Key: "size", Value: 1}}))
	if err != nil {
		return 0, err
	}
	var parts []struct {
		Size int64 `bson:"size"`
	}
	if err := cur.All(ctx, &parts); err != nil {
		return 0, err
	}
	var n int64
	for _, p := range parts {
		n += max(0, min(p.Size, maxSnapshotPart))
	}
	return n, nil
}

// maxSnapshotPart bounds the size a snapshot part may claim (see
// SnapshotSize).
const maxSnapshotPart = 2 << 20

func (t *tx) SnapshotParts(ctx context.Context, use func([]byte) bool) error {
	cur, err := t.d.snaps.Find(ctx, bson.D{}, options.Find().SetSort(bson.D{{Key: "part", Value: 1}}))
	if err != nil {
		return err
	}
	defer cur.Close(ctx)
	for cur.Next(ctx) {
		var p struct {
			Data []byte `bson:"data"`
		}
		if err := cur.Decode(&p); err != nil {
			return err
		}
		if !use(p.Data) {
			return nil
		}
	}
	return cur.Err()
}

func (t *tx) VectorsOf(ctx context.Context, keys []store.RowKey, fn func(store.RowKey, time.Time, []store.Vector) error) error {
	for start := 0; start < len(keys); start += 200 {
		f, n := keysCond(keys[start:min(len(keys), start+200)])
		if n == 0 {
			continue
		}
		cur, err := t.d.vecs.Find(ctx, f, options.Find().SetSort(bson.D{{Key: fNSStr, Value: 1}, {Key: fKey, Value: 1}}))
		if err := vectors(ctx, cur, err, nil, fn); err != nil {
			return err
		}
	}
	return nil
}

func (t *tx) AllVectors(ctx context.Context, fn func(store.RowKey, time.Time, []store.Vector) error) error {
	cur, err := t.d.vecs.Find(ctx, bson.D{}, options.Find().SetSort(bson.D{{Key: fNSStr, Value: 1}, {Key: fKey, Value: 1}}))
	return vectors(ctx, cur, err, nil, fn)
}

// StorageBytes estimates the vectors' bytes from their count (the server's
// collection statistics differ between servers).
func (t *tx) StorageBytes(ctx context.Context) (int64, error) {
	n, err := t.d.vecs.EstimatedDocumentCount(ctx)
	return n * int64(4*t.d.dims+96), err
}

func (t *tx) Bump(ctx context.Context, changed []store.RowKey, full bool) (int64, error) {
	w, err := t.idx(ctx)
	if err != nil {
		return 0, err
	}
	if w.gen == 0 {
		w.gen = w.prev.Gen + 1
	}
	w.keys = append(w.keys, changed...)
	w.full = w.full || full
	return w.gen, nil
}

func (t *tx) OnCommit(fn func()) {
	if t.iw == nil {
		t.iw = &idxWrite{}
	}
	t.iw.commit = append(t.iw.commit, fn)
}

// current is the condition that generation gen is still the store's and
// its codes'.
func current(gen int64) bson.D {
	return bson.D{{Key: "_id", Value: stateID}, {Key: "gen", Value: gen}, {Key: "codes_gen", Value: gen}}
}

func (t *tx) PutSnapshot(ctx context.Context, gen int64, parts [][]byte) (bool, error) {
	if !t.write {
		return false, errReadOnly
	}
	st, err := t.d.readState(ctx)
	if err != nil || st.Gen != gen || st.CodesGen != gen {
		return false, err
	}
	if _, err := t.d.snaps.DeleteMany(ctx, bson.D{}); err != nil {
		return false, err
	}
	docs := make([]any, len(parts))
	for i, p := range parts {
		docs[i] = bson.D{{Key: "part", Value: i}, {Key: "size", Value: int64(len(p))}, {Key: "data", Value: bson.Binary{Data: p}}}
	}
	if len(docs) > 0 {
		if _, err := t.d.snaps.InsertMany(ctx, docs); err != nil {
			return false, err
		}
	}
	res, err := t.d.index.UpdateOne(ctx, current(gen), bson.D{{Key: "$set", Value: bson.D{{Key: "snapshot_gen", Value: gen}}}})
	return err == nil && res.MatchedCount == 1, err
}

func (t *tx) PutCoverage(ctx context.Context, gen int64, cov vecindex.Coverage) (bool, error) {
	if !t.write {
		return false, errReadOnly
	}
	res, err := t.d.index.UpdateOne(ctx, current(gen), bson.D{{Key: "$set", Value: bson.D{
		{Key: "code_items", Value: cov.Items}, {Key: "code_sum", Value: int64(cov.Sum)}, {Key: "coverage_known", Value: true}}}})
	return err == nil && res.MatchedCount == 1, err
}

// countCoverage is the coverage of the items with codes, from every code.
func (d *driver) countCoverage(ctx context.Context) (vecindex.Coverage, error) {
	var c vecindex.Coverage
	cur, err := d.vecs.Find(ctx, bson.D{{Key: fCode, Value: bson.D{{Key: "$exists", Value: true}}}},
		options.Find().SetProjection(bson.D{{Key: fNSStr, Value: 1}, {Key: fKey, Value: 1}}).SetSort(bson.D{{Key: fNSStr, Value: 1}, {Key: fKey, Value: 1}}))
	if err != nil {
		return c, err
	}
	defer cur.Close(ctx)
	var last store.RowKey
	for cur.Next(ctx) {
		var doc codeDoc
		if err := cur.Decode(&doc); err != nil {
			return c, err
		}
		k := store.RowKey{NS: strings.ReplaceAll(doc.NSStr, sep, "."), Key: doc.Key}
		if c.Items == 0 || k != last {
			c.Add(vecindex.ItemHash(k))
			last = k
		}
	}
	return c, cur.Err()
}

func (t *tx) CountCoverage(ctx context.Context) error {
	if !t.write {
		return errReadOnly
	}
	c, err := t.d.countCoverage(ctx)
	if err != nil {
		return err
	}
	_, err = t.d.index.UpdateOne(ctx, bson.D{{Key: "_id", Value: stateID}}, bson.D{{Key: "$set", Value: bson.D{
		{Key: "code_items", Value: c.Items}, {Key: "code_sum", Value: int64(c.Sum)}, {Key: "coverage_known", Value: true}}}},
		options.UpdateOne().SetUpsert(true))
	return err
}

// CodedItems is the coverage as read, plus the transaction's puts with
// codes (an upper bound: a replaced item counts twice), which is what the
// engine needs of it — whether to centre the codes.
func (t *tx) CodedItems(ctx context.Context) (int64, error) {
	w, err := t.idx(ctx)
	if err != nil {
		return 0, err
	}
	n := w.cov.Cov.Items
	for i, op := range t.ops {
		if !t.dels[i] && op.Reindex && len(op.Vectors) > 0 {
			n++
		}
	}
	return n, nil
}

func (t *tx) SampleVectors(ctx context.Context, limit int, fn func([]float32)) error {
	cur, err := t.d.vecs.Find(ctx, bson.D{}, options.Find().SetLimit(int64(limit)).SetProjection(bson.D{{Key: fEmbedding, Value: 1}}))
	if err != nil {
		return err
	}
	defer cur.Close(ctx)
	for cur.Next(ctx) {
		var doc vecDoc
		if err := cur.Decode(&doc); err != nil {
			return err
		}
		if v, ok := decodeVector(doc.Embedding); ok {
			fn(v)
		}
	}
	return cur.Err()
}

func (t *tx) Recode(ctx context.Context, gen int64, centre []float32, code func([]float32) []byte) error {
	w, err := t.idx(ctx)
	if err != nil {
		return err
	}
	w.recode = &recode{centre: centre, code: code}
	return nil
}

// runRecode rewrites every code with code(vector) and returns the codes'
// coverage. Each vector document is replaced by a new one (insert, then
// delete the old, 500 at a time): FerretDB updates by _id at about 6 ms
// a document, inserts and deletes by _id $in at a fraction of that. A
// search of another process meanwhile may meet an item's vector twice
// (its score is the same) or codes of both centres, until this commit's
// state, which logs that every item changed, makes it reload.
func (d *driver) runRecode(ctx context.Context, r *recode) (vecindex.Coverage, error) {
	cur, err := d.vecs.Find(ctx, bson.D{}, options.Find().SetProjection(bson.D{{Key: "_id", Value: 1}}))
	if err != nil {
		return vecindex.Coverage{}, err
	}
	var ids bson.A
	for cur.Next(ctx) {
		ids = append(ids, docID(cur))
	}
	err = cur.Err()
	cur.Close(ctx)
	if err != nil {
		return vecindex.Coverage{}, err
	}
	for start := 0; start < len(ids); start += 500 {
		chunk := ids[start:min(len(ids), start+500)]
		in := bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: chunk}}}}
		cur, err := d.vecs.Find(ctx, in)
		if err != nil {
			return vecindex.Coverage{}, err
		}
		var docs []any
		for cur.Next(ctx) {
			var doc bson.D
			if err := cur.Decode(&doc); err != nil {
				cur.Close(ctx)
				return vecindex.Coverage{}, err
			}
			out := bson.D{{Key: "_id", Value: bson.NewObjectID()}}
			var c []byte
			for _, e := range doc {
				switch e.Key {
				case "_id", fCode:
				case fEmbedding:
					if b, ok := e.Value.(bson.Binary); ok {
						if v, ok := decodeVector(b.Data); ok {
							c = r.code(v)
						}
					}
					out = append(out, e)
				default:
					out = append(out, e)
				}
			}
			if c != nil {
				out = append(out, bson.E{Key: fCode, Value: bson.Binary{Data: c}})
			}
			docs = append(docs, out)
		}
		err = cur.Err()
		cur.Close(ctx)
		if err != nil {
			return vecindex.Coverage{}, err
		}
		if len(docs) > 0 {
			if _, err := d.vecs.InsertMany(ctx, docs); err != nil {
				return vecindex.Coverage{}, err
			}
		}
		if _, err := d.vecs.DeleteMany(ctx, in); err != nil {
			return vecindex.Coverage{}, err
		}
	}
	return d.countCoverage(ctx)
}

// commitIndex ends a write transaction's changes to the index's data,
// after its items and vectors: a recode, the log, then the state.
func (d *driver) commitIndex(ctx context.Context, w *idxWrite) error {
	set := bson.D{}
	if w.recode != nil {
		cov, err := d.runRecode(ctx, w.recode)
		if err != nil {
			return err
		}
		w.cov = vecindex.StoredCoverage{Cov: cov, Known: true}
		var c any
		if w.recode.centre != nil {
			c = bson.Binary{Data: encodeVector(w.recode.centre)}
		}
		set = append(set, bson.E{Key: "centre", Value: c}, bson.E{Key: "codes_gen", Value: w.gen})
		w.deleted = true // the snapshot holds the old codes
	} else if w.prev.CodesGen == w.prev.Gen {
		set = append(set, bson.E{Key: "codes_gen", Value: w.gen})
	}
	if w.deleted {
		if _, err := d.snaps.DeleteMany(ctx, bson.D{}); err != nil {
			return err
		}
		set = append(set, bson.E{Key: "snapshot_gen", Value: int64(-1)})
	} else {
		set = append(set, bson.E{Key: "snapshot_gen", Value: w.prev.SnapGen})
	}
	var logs []any
	if w.full || len(w.keys) > maxLogItems {
		logs = append(logs, bson.D{{Key: "gen", Value: w.gen}, {Key: "full", Value: true}})
	} else {
		for _, k := range w.keys {
			s, _ := nsStr(k.NS)
			logs = append(logs, bson.D{{Key: "gen", Value: w.gen}, {Key: fNSStr, Value: s}, {Key: fKey, Value: k.Key}})
		}
	}
	if len(logs) > 0 {
		if _, err := d.log.InsertMany(ctx, logs); err != nil {
			return err
		}
	}
	// The log is trimmed every 64 generations (a round trip saved on
	// the others): a process further behind than the floor reloads.
	floor := w.prev.LogFloor
	if w.gen%64 == 0 && w.gen > logKeep {
		floor = max(floor, w.gen-logKeep)
		if _, err := d.log.DeleteMany(ctx, bson.D{{Key: "gen", Value: bson.D{{Key: "$lte", Value: floor}}}}); err != nil {
			return err
		}
	}
	set = append(set, bson.E{Key: "gen", Value: w.gen}, bson.E{Key: "log_floor", Value: floor},
		bson.E{Key: "code_items", Value: w.cov.Cov.Items}, bson.E{Key: "code_sum", Value: int64(w.cov.Cov.Sum)},
		bson.E{Key: "coverage_known", Value: w.cov.Known})
	_, err := d.index.UpdateOne(ctx, bson.D{{Key: "_id", Value: stateID}}, bson.D{{Key: "$set", Value: set}}, options.UpdateOne().SetUpsert(true))
	return err
}

var (
	_ engine.IndexTx     = (*tx)(nil)
	_ engine.IndexWriter = (*tx)(nil)
	_ engine.FloatSource = (*tx)(nil)
)
