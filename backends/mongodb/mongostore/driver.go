package mongostore

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/memvault/memvault/keys"
	"github.com/memvault/memvault/store"
	"github.com/memvault/memvault/store/engine"
	"github.com/memvault/memvault/store/vecindex"
)

// Field names of an item document: Python's MongoDBStore's, then
// memvault's own (see doc.go).
const (
	fNSStr     = "namespace_str"
	fKey       = "key"
	fNamespace = "namespace"
	fValue     = "value"
	fCreatedAt = "created_at"
	fUpdatedAt = "updated_at"
	// memvault's: the value as stored when it is not a plain BSON
	// document, exact timestamps, expiry and TTL, and whether the item
	// has vectors.
	fMVValue   = "memvault_value"
	fMVCreated = "memvault_created"
	fMVUpdated = "memvault_updated"
	fMVExpires = "memvault_expires"
	fMVTTL     = "memvault_ttl"
	fMVIndexed = "memvault_indexed"
	// The expiry as a BSON date, for the server's TTL index
	// (Options.TTLIndex), on items and their vectors.
	fMVExpiresAt = "memvault_expires_at"
	// Vector documents.
	fField     = "field"
	fEmbedding = "embedding"
	fCode      = "code"
)

// sep joins a namespace's labels in namespace_str, as Python's
// MongoDBStore does by default.
const sep = "/"

// errSlashLabel is wrapped (with store.ErrInvalidNamespace) by a put whose
// namespace has a label holding sep: namespace_str could not tell it from
// two labels (Python's MongoDBStore refuses such labels too).
var errSlashLabel = errors.New("a namespace label holds '/', the separator of namespace_str")

// nsStr is the namespace_str of a namespace as the engine names it
// (labels joined with '.'); ok is false when a label holds sep.
func nsStr(ns string) (string, bool) {
	if strings.Contains(ns, sep) {
		return "", false
	}
	return strings.ReplaceAll(ns, ".", sep), true
}

// driver is the store.Driver over an items and a vectors collection.
// MongoDB-protocol servers may lack multi-document transactions (FerretDB
// has none; Python's store uses none): a write transaction holds mu and
// the store's writer lease (lease.go), keeps its puts and deletes and
// applies them at Commit (vectors first, then the items, in one ordered
// bulk write each), so that a rolled-back one writes nothing and the
// writers of every process are serialized. Reads are statements of their
// own. Python's writers take no lease: see doc.go.
type driver struct {
	items, vecs *mongo.Collection
	// The code index's collections (index.go).
	index, log, snaps *mongo.Collection
	// codes: the store has an index; its writes keep codes and the
	// index's data (store.DriverCaps.CodeIndex). dims: its dimensions.
	codes bool
	dims  int
	// sealed: values are envelopes of a serializer, stored as bytes
	// (memvault_value), never as a "value" document.
	sealed bool
	ttl    bool // items may expire: vector scans skip expired items
	// ttlIndexed: the server has the TTL index on items
	// (Options.TTLIndex, ttlindex.go): documents carry
	// memvault_expires_at, and sweeps also delete the vectors of items
	// the server deleted.
	ttlIndexed bool
	ttlStatus  TTLIndexStatus
	// mu serializes this process's write transactions; lease, those of
	// every process (lease.go).
	mu    sync.Mutex
	lease writerLease
	// beforeWrite, when set (tests), runs in a write transaction's
	// Commit after the engine checked the keys that sealed its values
	// and after Commit read the items it replaces, before anything is
	// written.
	beforeWrite func()
	// afterWrite, when set (tests), runs in a write transaction's
	// Commit just after its writes, before it checks the erasure guard
	// again.
	afterWrite func()
}

func (d *driver) Name() string { return "mongodb" }

// Caps: the refresh of an expiry is one single-document update, safe in
// a read; Put keeps created and moves updated forward at Commit, from
// the rows it reads there under mu.
func (d *driver) Caps() store.DriverCaps {
	return store.DriverCaps{RefreshInView: true, UpsertVersions: true, CodeIndex: d.codes}
}

func (d *driver) Close() error { return nil }

func (d *driver) Begin(ctx context.Context, write bool) (store.DriverTx, error) {
	if !write {
		return &tx{d: d}, nil
	}
	d.mu.Lock()
	h, err := d.lease.acquire(ctx)
	if err != nil {
		d.mu.Unlock()
		return nil, err
	}
	return &tx{d: d, write: true, lease: h}, nil
}

// tx is a transaction: a read-only one reads the server directly; a write
// one keeps its puts and deletes (ops, and the rows they leave in over,
// which its Gets read first) until Commit.
type tx struct {
	d     *driver
	write bool
	done  bool
	ops   []store.RowWrite // a delete is a RowWrite with deleted set
	dels  map[int]bool
	over  map[store.RowKey]int // the last op of a key
	iw    *idxWrite            // the code index's bookkeeping (index.go)
	lease *held                // a write transaction's writer lease
	// fences are the fences of the keys that sealed the values written
	// (Fence): checked before the writes and again at Commit after them
	// (guardAgain).
	fences []store.WriteFence
}

var _ engine.FenceTx = (*tx)(nil)

// Fence implements engine.FenceTx: f is checked now, before the writes, as
// the engine would, and kept for Commit to check again once they are made
// (guardAgain).
func (t *tx) Fence(ctx context.Context, f store.WriteFence) error {
	if err := f.Check(ctx); err != nil {
		return err
	}
	t.fences = append(t.fences, f)
	return nil
}

// guardAgain checks the transaction's fences again after Commit wrote w:
// the erasure guard's second look (see the package doc, and mongosaver's
// "The erasure guard" for why it covers every interleaving).
// MongoDB runs no transaction to hold the guard's read and the writes
// together, so a write whose first check came before an erasure recorded
// its mark may land after the erasure deleted the subject's items; read
// after the write, the mark is seen, and what was written is taken back.
// Only a refusal (keys.ErrSubjectErased) takes it back: another error
// leaves the write in place and is returned.
func (t *tx) guardAgain(ctx context.Context, w wrote) error {
	for _, f := range t.fences {
		err := f.Check(ctx)
		if err == nil {
			continue
		}
		if errors.Is(err, keys.ErrSubjectErased) {
			if terr := t.d.takeBack(ctx, w); terr != nil {
				return errors.Join(err, terr)
			}
		}
		return err
	}
	return nil
}

// wrote is what apply stored: the version of every item document it
// inserted or replaced (its _id and memvault_updated) and the key and
// version of the vectors it inserted, so that takeBack deletes exactly
// those, never a later write's.
type wrote struct{ items, vecs []bson.D }

// takeBack deletes what apply stored (w): the items first (the values),
// then their vectors; a crash in between leaves the vectors, which the
// next put of the key or the subject's erasure run again (DeletePrefix)
// deletes. Commit then returns before the code index's commit: nothing
// of the write is logged.
func (d *driver) takeBack(ctx context.Context, w wrote) error {
	for _, c := range []struct {
		coll *mongo.Collection
		fs   []bson.D
	}{{d.items, w.items}, {d.vecs, w.vecs}} {
		if len(c.fs) == 0 {
			continue
		}
		models := make([]mongo.WriteModel, len(c.fs))
		for i, f := range c.fs {
			models[i] = mongo.NewDeleteManyModel().SetFilter(f)
		}
		if _, err := c.coll.BulkWrite(ctx, models, options.BulkWrite().SetOrdered(false)); err != nil {
			return fmt.Errorf("mongodb: taking back the writes the erasure guard refused failed: %w", err)
		}
	}
	return nil
}

var errReadOnly = errors.New("mongodb: write in a read-only transaction")

func (t *tx) end() {
	if !t.done && t.write {
		t.lease.release()
		t.d.mu.Unlock()
	}
	t.done = true
}

// confirm makes sure a write transaction still holds the writer lease
// before it writes (see lease.go).
func (t *tx) confirm(ctx context.Context) error {
	if !t.write {
		return errReadOnly
	}
	return t.lease.confirm(ctx)
}

func (t *tx) Rollback() error {
	t.end()
	return nil
}

func (t *tx) Commit() error {
	defer t.end()
	// Commit has no context of its own: the writes are bounded by the
	// driver's timeouts, like a SQL COMMIT.
	ctx := context.Background()
	if len(t.ops) > 0 || (t.iw != nil && t.iw.gen != 0) {
		if err := t.confirm(ctx); err != nil {
			return err
		}
	}
	if len(t.ops) > 0 {
		if t.d.codes && (t.iw == nil || t.iw.gen == 0) {
			// Changes the engine did not log (a store's puts without
			// vectors): logged all the same, for the indexes of other
			// processes.
			keys := make([]store.RowKey, len(t.ops))
			for i, op := range t.ops {
				keys[i] = op.RowKey
			}
			if _, err := t.Bump(ctx, keys, false); err != nil {
				return err
			}
		}
		w, err := t.d.apply(ctx, t.ops, t.dels, t.iw)
		if err != nil {
			return err
		}
		if t.d.afterWrite != nil {
			t.d.afterWrite()
		}
		if err := t.guardAgain(ctx, w); err != nil {
			return err
		}
	}
	if t.iw == nil {
		return nil
	}
	if t.iw.gen != 0 {
		if err := t.d.commitIndex(ctx, t.iw); err != nil {
			return err
		}
	}
	for _, fn := range t.iw.commit {
		fn()
	}
	return nil
}

// itemDoc is an item document as read.
type itemDoc struct {
	NSStr     string    `bson:"namespace_str"`
	Key       string    `bson:"key"`
	Namespace []string  `bson:"namespace"`
	Value     bson.Raw  `bson:"value"`
	MVValue   []byte    `bson:"memvault_value"`
	CreatedAt time.Time `bson:"created_at"`
	UpdatedAt time.Time `bson:"updated_at"`
	Created   *int64    `bson:"memvault_created"`
	Updated   *int64    `bson:"memvault_updated"`
	Expires   *int64    `bson:"memvault_expires"`
	TTL       int32     `bson:"memvault_ttl"`
	Indexed   bool      `bson:"memvault_indexed"`
}

// row is the store.Row of a document: its value column as memvault wrote
// it, or the JSON of Python's "value" document.
func (doc *itemDoc) row() (store.Row, error) {
	r := store.Row{RowKey: store.RowKey{NS: strings.ReplaceAll(doc.NSStr, sep, "."), Key: doc.Key},
		Created: doc.CreatedAt, Updated: doc.UpdatedAt, TTLMinutes: int(doc.TTL)}
	// Values are sealed to the namespace's labels joined with '.', so a
	// label holding '.' would share its associated data with two labels
	// (["a.b"] and ["a","b"]): a value moved into such a document would
	// open as the other namespace's item. Neither memvault nor Python's
	// MongoDBStore writes such a label (store.Namespace.Validate refuses
	// it), so a namespace_str holding '.' (and so, below, any array that
	// agrees with it) is refused.
	if strings.Contains(doc.NSStr, ".") {
		return r, fmt.Errorf("%w: item %q/%q: its namespace_str holds '.', which no namespace label may", ErrDocument, doc.NSStr, doc.Key)
	}
	if len(doc.Namespace) > 0 {
		// The array names the labels exactly, but
		// the document was found by namespace_str: they must agree, or a
		// value sealed to another namespace, moved in with its array,
		// would be opened as the other namespace's item.
		if strings.Join(doc.Namespace, sep) != doc.NSStr {
			return r, fmt.Errorf("%w: item %q/%q: its namespace array %q is not its namespace_str", ErrDocument, doc.NSStr, doc.Key, doc.Namespace)
		}
		r.Namespace = store.Namespace(doc.Namespace)
		r.NS = r.Namespace.String()
	}
	if doc.Created != nil {
		r.Created = time.Unix(0, *doc.Created)
	}
	// memvault's exact time, unless Python's updated_at moved since
	// (Python's $set leaves memvault's fields as they were).
	if doc.Updated != nil && time.Unix(0, *doc.Updated).UnixMilli() == doc.UpdatedAt.UnixMilli() {
		r.Updated = time.Unix(0, *doc.Updated)
	}
	if doc.Expires != nil {
		r.Expires = time.Unix(0, *doc.Expires)
	}
	// memvault writes one of the two; a "value" beside memvault_value is
	// Python's later $set.
	switch {
	case doc.MVValue != nil && doc.Value == nil:
		r.Value = doc.MVValue
	case doc.Value != nil:
		v, err := bsonJSON(doc.Value)
		if err != nil {
			return r, fmt.Errorf("item %q/%q: value: %w", r.NS, r.Key, err)
		}
		r.Value = v
	default:
		r.Value = []byte("{}")
	}
	return r, nil
}

// keyFilter selects the document of k.
func keyFilter(k store.RowKey) (bson.D, bool) {
	s, ok := nsStr(k.NS)
	return bson.D{{Key: fNSStr, Value: s}, {Key: fKey, Value: k.Key}}, ok
}

// liveCond is the condition of documents live at now.
func liveCond(now time.Time) bson.E {
	return bson.E{Key: "$or", Value: bson.A{
		bson.D{{Key: fMVExpires, Value: bson.D{{Key: "$exists", Value: false}}}},
		bson.D{{Key: fMVExpires, Value: bson.D{{Key: "$gt", Value: now.UnixNano()}}}},
	}}
}

// prefixCond selects namespace_str prefix or under it: a range on the
// text, exact whatever the labels hold (no regular expression), as
// store/sqlitestore does ('0' follows '/').
func prefixCond(prefix store.Namespace) (bson.E, bool) {
	if len(prefix) == 0 {
		return bson.E{}, true
	}
	p, ok := nsStr(prefix.String())
	if !ok {
		return bson.E{}, false
	}
	return bson.E{Key: "$or", Value: bson.A{
		bson.D{{Key: fNSStr, Value: p}},
		bson.D{{Key: fNSStr, Value: bson.D{{Key: "$gte", Value: p + sep}, {Key: "$lt", Value: p + "0"}}}},
	}}, true
}

// and joins conditions (empty ones skipped) with $and, so that several
// $or conditions do not collide.
func and(conds ...bson.E) bson.D {
	var parts bson.A
	for _, c := range conds {
		if c.Key != "" {
			parts = append(parts, bson.D{c})
		}
	}
	if len(parts) == 0 {
		return bson.D{}
	}
	return bson.D{{Key: "$and", Value: parts}}
}

func decodeRows(ctx context.Context, cur *mongo.Cursor, err error, dst []store.Row) ([]store.Row, error) {
	if err != nil {
		return dst, err
	}
	defer cur.Close(ctx)
	for cur.Next(ctx) {
		var doc itemDoc
		if err := cur.Decode(&doc); err != nil {
			return dst, err
		}
		r, err := doc.row()
		if err != nil {
			return dst, err
		}
		dst = append(dst, r)
	}
	return dst, cur.Err()
}

func (t *tx) Get(ctx context.Context, k store.RowKey) (store.Row, bool, error) {
	if i, ok := t.over[k]; ok {
		if t.dels[i] {
			return store.Row{}, false, nil
		}
		return t.ops[i].Row, true, nil
	}
	f, ok := keyFilter(k)
	if !ok {
		return store.Row{}, false, nil
	}
	var doc itemDoc
	err := t.d.items.FindOne(ctx, f).Decode(&doc)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return store.Row{}, false, nil
	}
	if err != nil {
		return store.Row{}, false, err
	}
	r, err := doc.row()
	return r, err == nil, err
}

// keysCond selects the documents of keys (those a document can hold) and
// returns how many keys it names: per namespace, {namespace_str, key:
// {$in}}, several namespaces under $or. (An $or of one (namespace_str,
// key) pair per key is what a server with indexes serves as well, but
// FerretDB evaluates it document by document: 200 pairs took 7–11 s over
// 1 500 documents, the $in form 0.2 s.)
func keysCond(keys []store.RowKey) (bson.D, int) {
	var (
		order []string
		byNS  = map[string]bson.A{}
		n     int
	)
	for _, k := range keys {
		s, ok := nsStr(k.NS)
		if !ok {
			continue
		}
		if _, seen := byNS[s]; !seen {
			order = append(order, s)
		}
		byNS[s] = append(byNS[s], k.Key)
		n++
	}
	group := func(s string) bson.D {
		if ks := byNS[s]; len(ks) == 1 {
			return bson.D{{Key: fNSStr, Value: s}, {Key: fKey, Value: ks[0]}} // equality: FerretDB pushes it down
		}
		return bson.D{{Key: fNSStr, Value: s}, {Key: fKey, Value: bson.D{{Key: "$in", Value: byNS[s]}}}}
	}
	if len(order) == 1 {
		return group(order[0]), n
	}
	or := make(bson.A, len(order))
	for i, s := range order {
		or[i] = group(s)
	}
	return bson.D{{Key: "$or", Value: or}}, n
}

func (t *tx) Rows(ctx context.Context, keys []store.RowKey, dst []store.Row) ([]store.Row, error) {
	var read []store.RowKey
	for _, k := range keys {
		if i, ok := t.over[k]; ok {
			if !t.dels[i] {
				dst = append(dst, t.ops[i].Row)
			}
			continue
		}
		read = append(read, k)
	}
	for start := 0; start < len(read); start += 200 {
		f, n := keysCond(read[start:min(len(read), start+200)])
		if n == 0 {
			continue
		}
		cur, err := t.d.items.Find(ctx, f)
		if dst, err = decodeRows(ctx, cur, err, dst); err != nil {
			return dst, err
		}
	}
	return dst, nil
}

func (t *tx) Scan(ctx context.Context, prefix store.Namespace, now time.Time, withoutVectors bool, after *store.ScanAfter, limit int) ([]store.Row, error) {
	return t.scan(ctx, prefix, now, withoutVectors, after, limit, bson.E{})
}

// scan is Scan with an extra condition (empty: none).
func (t *tx) scan(ctx context.Context, prefix store.Namespace, now time.Time, withoutVectors bool, after *store.ScanAfter, limit int, extra bson.E) ([]store.Row, error) {
	pc, ok := prefixCond(prefix)
	if !ok {
		return nil, nil
	}
	conds := []bson.E{pc, liveCond(now), extra}
	if withoutVectors {
		conds = append(conds, bson.E{Key: fMVIndexed, Value: bson.D{{Key: "$ne", Value: true}}})
	}
	if after != nil {
		s, _ := nsStr(after.NS)
		u := after.Updated.UnixNano()
		conds = append(conds, bson.E{Key: "$or", Value: bson.A{
			bson.D{{Key: fMVUpdated, Value: bson.D{{Key: "$lt", Value: u}}}},
			bson.D{{Key: fMVUpdated, Value: u}, {Key: fNSStr, Value: bson.D{{Key: "$gt", Value: s}}}},
			bson.D{{Key: fMVUpdated, Value: u}, {Key: fNSStr, Value: s}, {Key: fKey, Value: bson.D{{Key: "$gt", Value: after.Key}}}},
		}})
	}
	opt := options.Find().SetSort(bson.D{{Key: fMVUpdated, Value: -1}, {Key: fNSStr, Value: 1}, {Key: fKey, Value: 1}}).SetLimit(int64(limit))
	cur, err := t.d.items.Find(ctx, and(conds...), opt)
	return decodeRows(ctx, cur, err, nil)
}

// vecDoc is a vector document as read.
type vecDoc struct {
	NSStr     string `bson:"namespace_str"`
	Key       string `bson:"key"`
	Updated   int64  `bson:"memvault_updated"`
	Embedding []byte `bson:"embedding"`
}

// vectors calls fn once per item of the vector documents of cur (sorted by
// item) whose key live accepts (nil: every one).
func vectors(ctx context.Context, cur *mongo.Cursor, err error, live map[store.RowKey]bool, fn func(store.RowKey, time.Time, []store.Vector) error) error {
	if err != nil {
		return err
	}
	defer cur.Close(ctx)
	var (
		cur0 store.RowKey
		upd  int64
		vs   []store.Vector
	)
	flush := func() error {
		if len(vs) == 0 {
			return nil
		}
		err := fn(cur0, time.Unix(0, upd), vs)
		vs = vs[:0]
		return err
	}
	for cur.Next(ctx) {
		var doc vecDoc
		if err := cur.Decode(&doc); err != nil {
			return err
		}
		k := store.RowKey{NS: strings.ReplaceAll(doc.NSStr, sep, "."), Key: doc.Key}
		if live != nil && !live[k] {
			continue
		}
		if k != cur0 {
			if err := flush(); err != nil {
				return err
			}
			cur0, upd = k, doc.Updated
		}
		if v, ok := decodeVector(doc.Embedding); ok {
			vs = append(vs, store.Vector{Vec: v})
		}
	}
	if err := cur.Err(); err != nil {
		return err
	}
	return flush()
}

func (t *tx) Vectors(ctx context.Context, prefix store.Namespace, now time.Time, fn func(store.RowKey, time.Time, []store.Vector) error) error {
	pc, ok := prefixCond(prefix)
	if !ok {
		return nil
	}
	var live map[store.RowKey]bool
	if t.d.ttl {
		// The items live now, then their vectors: no join.
		cur, err := t.d.items.Find(ctx, and(pc, liveCond(now), bson.E{Key: fMVIndexed, Value: true}),
			options.Find().SetProjection(bson.D{{Key: fNSStr, Value: 1}, {Key: fKey, Value: 1}}))
		if err != nil {
			return err
		}
		live = map[store.RowKey]bool{}
		for cur.Next(ctx) {
			var doc vecDoc
			if err := cur.Decode(&doc); err != nil {
				cur.Close(ctx)
				return err
			}
			live[store.RowKey{NS: strings.ReplaceAll(doc.NSStr, sep, "."), Key: doc.Key}] = true
		}
		err = cur.Err()
		cur.Close(ctx)
		if err != nil {
			return err
		}
	}
	cur, err := t.d.vecs.Find(ctx, and(pc), options.Find().SetSort(bson.D{{Key: fNSStr, Value: 1}, {Key: fKey, Value: 1}}))
	return vectors(ctx, cur, err, live, fn)
}

func (t *tx) Page(ctx context.Context, ns, after string, limit int, now time.Time) ([]store.Row, error) {
	s, ok := nsStr(ns)
	if !ok {
		return nil, nil
	}
	f := and(bson.E{Key: fNSStr, Value: s}, bson.E{Key: fKey, Value: bson.D{{Key: "$gt", Value: after}}}, liveCond(now))
	cur, err := t.d.items.Find(ctx, f, options.Find().SetSort(bson.D{{Key: fKey, Value: 1}}).SetLimit(int64(limit)))
	return decodeRows(ctx, cur, err, nil)
}

func (t *tx) Namespaces(ctx context.Context, prefix store.Namespace, now time.Time) ([]store.Namespace, error) {
	pc, ok := prefixCond(prefix)
	if !ok {
		return nil, nil
	}
	// A $group, not a distinct: its result comes back through a cursor,
	// in batches, where a distinct's is one reply MongoDB caps at 16 MiB
	// (some hundred thousand namespaces).
	cur, err := t.d.items.Aggregate(ctx, mongo.Pipeline{
		{{Key: "$match", Value: and(pc, liveCond(now))}},
		{{Key: "$group", Value: bson.D{{Key: "_id", Value: "$" + fNSStr}}}},
	})
	if err != nil {
		return nil, err
	}
	defer func() { _ = cur.Close(ctx) }()
	var out []store.Namespace
	for cur.Next(ctx) {
		id := cur.Current.Lookup("_id")
		if id.Type == bson.TypeNull {
			continue // documents without namespace_str, which distinct skipped
		}
		s, ok := id.StringValueOK()
		if !ok {
			return nil, fmt.Errorf("%w: an item's namespace_str is not a string", ErrDocument)
		}
		if strings.Contains(s, ".") {
			// As row refuses the document: such a label is no one's.
			return nil, fmt.Errorf("%w: namespace_str %q holds '.', which no namespace label may", ErrDocument, s)
		}
		out = append(out, store.Namespace(strings.Split(s, sep)))
	}
	return out, cur.Err()
}

// record keeps a write op until Commit.
func (t *tx) record(w store.RowWrite, deleted bool) error {
	if !t.write {
		return errReadOnly
	}
	if t.over == nil {
		t.over, t.dels = map[store.RowKey]int{}, map[int]bool{}
	}
	t.over[w.RowKey] = len(t.ops)
	if deleted {
		t.dels[len(t.ops)] = true
	}
	t.ops = append(t.ops, w)
	return nil
}

func (t *tx) Put(_ context.Context, w store.RowWrite) error {
	if _, ok := nsStr(w.NS); !ok {
		return fmt.Errorf("%w: %w", store.ErrInvalidNamespace, errSlashLabel)
	}
	return t.record(w, false)
}

func (t *tx) Delete(_ context.Context, k store.RowKey) error {
	return t.record(store.RowWrite{Row: store.Row{RowKey: k}}, true)
}

func (t *tx) Refresh(ctx context.Context, k store.RowKey, expires time.Time) error {
	f, ok := keyFilter(k)
	if !ok {
		return nil
	}
	set := bson.D{{Key: fMVExpires, Value: expires.UnixNano()}}
	if t.d.ttlIndexed {
		set = append(set, bson.E{Key: fMVExpiresAt, Value: expires})
	}
	_, err := t.d.items.UpdateOne(ctx, f, bson.D{{Key: "$set", Value: set}})
	return err
}

// DeletePrefix deletes at once, not at Commit: the engine's transaction
// holds nothing else (its count is the result). Vectors go first, so
// that no vector outlives its item.
func (t *tx) DeletePrefix(ctx context.Context, prefix store.Namespace) (int, error) {
	if err := t.confirm(ctx); err != nil {
		return 0, err
	}
	pc, ok := prefixCond(prefix)
	if !ok {
		return 0, nil
	}
	if t.d.codes {
		// The coverage loses the items with codes; the log keeps no
		// name under prefix (an erasure leaves none behind): the engine
		// logs that every item may have changed.
		w, err := t.idx(ctx)
		if err != nil {
			return 0, err
		}
		if err := t.forIndexed(ctx, and(pc, bson.E{Key: fMVIndexed, Value: true}), func(k store.RowKey) {
			w.cov.Cov.Sub(vecindex.ItemHash(k))
		}); err != nil {
			return 0, err
		}
		w.deleted = true
		if _, err := t.d.log.DeleteMany(ctx, and(pc)); err != nil {
			return 0, err
		}
	}
	if _, err := t.d.vecs.DeleteMany(ctx, and(pc)); err != nil {
		return 0, err
	}
	res, err := t.d.items.DeleteMany(ctx, and(pc))
	if err != nil {
		return 0, err
	}
	return int(res.DeletedCount), nil
}

// forIndexed calls fn with the key of every item document f selects.
func (t *tx) forIndexed(ctx context.Context, f bson.D, fn func(store.RowKey)) error {
	cur, err := t.d.items.Find(ctx, f, options.Find().SetProjection(bson.D{{Key: fNSStr, Value: 1}, {Key: fKey, Value: 1}}))
	if err != nil {
		return err
	}
	defer cur.Close(ctx)
	for cur.Next(ctx) {
		var doc vecDoc
		if err := cur.Decode(&doc); err != nil {
			return err
		}
		fn(store.RowKey{NS: strings.ReplaceAll(doc.NSStr, sep, "."), Key: doc.Key})
	}
	return cur.Err()
}

// DeleteExpired deletes at once, as DeletePrefix does.
func (t *tx) DeleteExpired(ctx context.Context, now time.Time) ([]store.RowKey, error) {
	if err := t.confirm(ctx); err != nil {
		return nil, err
	}
	expired := bson.D{{Key: fMVExpires, Value: bson.D{{Key: "$lt", Value: now.UnixNano()}}}}
	cur, err := t.d.items.Find(ctx, expired, options.Find().SetProjection(bson.D{{Key: fNSStr, Value: 1}, {Key: fKey, Value: 1},
		{Key: fNamespace, Value: 1}, {Key: fMVIndexed, Value: 1}}))
	var (
		gone, indexed []store.RowKey
		ids           bson.A
	)
	if err != nil {
		return nil, err
	}
	for cur.Next(ctx) {
		var doc itemDoc
		if err := cur.Decode(&doc); err != nil {
			cur.Close(ctx)
			return nil, err
		}
		r, _ := (&itemDoc{NSStr: doc.NSStr, Key: doc.Key, Namespace: doc.Namespace, MVValue: []byte{}}).row()
		gone = append(gone, r.RowKey)
		ids = append(ids, docID(cur))
		if doc.Indexed {
			indexed = append(indexed, r.RowKey)
		}
	}
	err = cur.Err()
	cur.Close(ctx)
	if err != nil {
		return nil, err
	}
	if t.d.ttlIndexed {
		orphans, coded, err := t.d.orphans(ctx, now)
		if err != nil {
			return nil, err
		}
		gone = append(gone, orphans...)
		indexed = append(indexed, coded...)
	}
	if len(gone) == 0 {
		return nil, nil
	}
	if t.d.codes {
		w, err := t.idx(ctx)
		if err != nil {
			return nil, err
		}
		for _, k := range indexed {
			w.cov.Cov.Sub(vecindex.ItemHash(k))
		}
		w.deleted = w.deleted || len(indexed) > 0
	}
	if err := t.d.dropVectors(ctx, indexed); err != nil {
		return nil, err
	}
	// By _id (see apply), and the expiry again: this process's writers
	// wait on mu, but a refresh of another may have moved it.
	for start := 0; start < len(ids); start += 500 {
		f := bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: ids[start:min(len(ids), start+500)]}}}, expired[0]}
		if _, err := t.d.items.DeleteMany(ctx, f); err != nil {
			return nil, err
		}
	}
	return gone, nil
}

// apply writes a transaction's ops: the rows they replace are read (one
// query per 200 keys) to keep their created_at and move updated past
// theirs (store.DriverCaps.UpsertVersions); the vectors of reindexed and
// deleted items go and the new ones are inserted; then the items are
// replaced or deleted in one ordered bulk write.
func (d *driver) apply(ctx context.Context, ops []store.RowWrite, dels map[int]bool, iw *idxWrite) (wrote, error) {
	var out wrote
	cov := func(k store.RowKey, add bool) {
		if iw != nil {
			if add {
				iw.cov.Cov.Add(vecindex.ItemHash(k))
			} else {
				iw.cov.Cov.Sub(vecindex.ItemHash(k))
			}
		}
	}
	keys := make([]store.RowKey, len(ops))
	for i, w := range ops {
		keys[i] = w.RowKey
	}
	type prev struct {
		id               any    // the document's _id
		ver              *int64 // its memvault_updated as read (nil: none)
		created, updated time.Time
		indexed          bool
	}
	// version is the condition that a document read above is unchanged:
	// its _id and memvault_updated (every memvault write moves it).
	version := func(p prev) bson.D {
		if p.ver == nil {
			return bson.D{{Key: "_id", Value: p.id}, {Key: fMVUpdated, Value: bson.D{{Key: "$exists", Value: false}}}}
		}
		return bson.D{{Key: "_id", Value: p.id}, {Key: fMVUpdated, Value: *p.ver}}
	}
	old := map[store.RowKey]prev{}
	for start := 0; start < len(keys); start += 200 {
		f, n := keysCond(keys[start:min(len(keys), start+200)])
		if n == 0 {
			continue
		}
		cur, err := d.items.Find(ctx, f, options.Find().SetProjection(bson.D{{Key: fValue, Value: 0}, {Key: fMVValue, Value: 0}}))
		if err != nil {
			return out, err
		}
		for cur.Next(ctx) {
			var doc itemDoc
			if err := cur.Decode(&doc); err != nil {
				cur.Close(ctx)
				return out, err
			}
			doc.MVValue = []byte{}
			r, _ := doc.row()
			old[r.RowKey] = prev{docID(cur), doc.Updated, r.Created, r.Updated, doc.Indexed}
		}
		err = cur.Err()
		cur.Close(ctx)
		if err != nil {
			return out, err
		}
	}
	if d.beforeWrite != nil {
		d.beforeWrite()
	}
	var (
		dropVecs []store.RowKey
		newVecs  []any
		models   []mongo.WriteModel
	)
	for i, w := range ops {
		f, _ := keyFilter(w.RowKey)
		if dels[i] {
			p, had := old[w.RowKey]
			if !had {
				continue
			}
			if p.indexed && iw != nil {
				cov(w.RowKey, false)
				iw.deleted = true
			}
			delete(old, w.RowKey)
			dropVecs = append(dropVecs, w.RowKey)
			models = append(models, mongo.NewDeleteOneModel().SetFilter(version(p)))
			continue
		}
		p, had := old[w.RowKey]
		if had {
			w.Created = p.created
			if !w.Updated.After(p.updated) {
				w.Updated = p.updated.Add(time.Nanosecond)
			}
		}
		indexed := p.indexed
		if w.Reindex {
			if p.indexed {
				cov(w.RowKey, false)
			}
			indexed = len(w.Vectors) > 0
			dropVecs = append(dropVecs, w.RowKey)
			coded := false
			for _, v := range w.Vectors {
				vd := bson.D{{Key: fNSStr, Value: f[0].Value}, {Key: fKey, Value: w.Key},
					{Key: fField, Value: v.Field}, {Key: fMVUpdated, Value: w.Updated.UnixNano()},
					{Key: fEmbedding, Value: bson.Binary{Data: encodeVector(v.Vec)}}}
				if d.ttlIndexed && !w.Expires.IsZero() {
					// The item's expiry as written: a sweep looks
					// for vectors the server's TTL index orphaned
					// among those past it (ttlindex.go).
					vd = append(vd, bson.E{Key: fMVExpires, Value: w.Expires.UnixNano()})
				}
				if v.Code != nil {
					vd = append(vd, bson.E{Key: fCode, Value: bson.Binary{Data: v.Code}})
					coded = true
				}
				newVecs = append(newVecs, vd)
			}
			if coded {
				cov(w.RowKey, true)
			}
		}
		doc, err := d.itemDocument(w, f, indexed)
		if err != nil {
			return out, err
		}
		if err := checkDocumentSize(w, doc); err != nil {
			return out, err // before anything of the batch is written
		}
		// By _id, read above: servers without query planning (FerretDB)
		// find a document by _id without reading the others. A new
		// item is inserted: under the lease no writer races it, and
		// the unique index refuses another's.
		// The replace is conditional on the version read: the writer
		// lease keeps other processes' writers out, and should it have
		// been lost meanwhile, the write fails rather than overwrite
		// theirs.
		if had {
			models = append(models, mongo.NewReplaceOneModel().SetFilter(version(p)).SetReplacement(doc))
		} else {
			p.id = bson.NewObjectID()
			models = append(models, mongo.NewInsertOneModel().SetDocument(append(bson.D{{Key: "_id", Value: p.id}}, doc...)))
		}
		u := w.Updated.UnixNano()
		old[w.RowKey] = prev{p.id, &u, w.Created, w.Updated, indexed}
		out.items = append(out.items, version(old[w.RowKey]))
		if w.Reindex && len(w.Vectors) > 0 {
			out.vecs = append(out.vecs, bson.D{{Key: fNSStr, Value: f[0].Value}, {Key: fKey, Value: w.Key}, {Key: fMVUpdated, Value: u}})
		}
	}
	if err := d.dropVectors(ctx, dropVecs); err != nil {
		return out, err
	}
	if len(newVecs) > 0 {
		if _, err := d.vecs.InsertMany(ctx, newVecs); err != nil {
			return out, err
		}
	}
	if len(models) == 0 {
		return out, nil
	}
	res, err := d.items.BulkWrite(ctx, models, options.BulkWrite().SetOrdered(true))
	if err != nil {
		if mongo.IsDuplicateKeyError(err) {
			// Another process inserted the key since the read:
			// only a writer whose lease was lost meets one.
			return out, fmt.Errorf("%w: %w: %w", store.ErrConflict, ErrLeaseLost, err)
		}
		return out, err
	}
	if n := res.InsertedCount + res.MatchedCount + res.DeletedCount; n < int64(len(models)) {
		return out, fmt.Errorf("%w: %w: %d of %d items changed by another writer since they were read", store.ErrConflict, ErrLeaseLost, int64(len(models))-n, len(models))
	}
	return out, nil
}

// dropVectors deletes the vector documents of keys, by their _ids (see
// apply).
func (d *driver) dropVectors(ctx context.Context, keys []store.RowKey) error {
	for start := 0; start < len(keys); start += 200 {
		f, n := keysCond(keys[start:min(len(keys), start+200)])
		if n == 0 {
			continue
		}
		cur, err := d.vecs.Find(ctx, f, options.Find().SetProjection(bson.D{{Key: "_id", Value: 1}}))
		if err != nil {
			return err
		}
		var ids bson.A
		for cur.Next(ctx) {
			ids = append(ids, docID(cur))
		}
		err = cur.Err()
		cur.Close(ctx)
		if err != nil {
			return err
		}
		if len(ids) > 0 {
			if _, err := d.vecs.DeleteMany(ctx, bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: ids}}}}); err != nil {
				return err
			}
		}
	}
	return nil
}

// MaxDocumentSize is MongoDB's limit on one BSON document (16 MiB).
// FerretDB stores larger ones; MongoDB refuses them, so the store keeps to
// the limit itself.
const MaxDocumentSize = 16 << 20

// checkDocumentSize fails, wrapping ErrTooLarge, when the item document of
// w would be over MaxDocumentSize. A value's JSON becomes at most ~9 times
// larger as BSON (an array of small numbers), so only values over 1 MiB
// are measured.
func checkDocumentSize(w store.RowWrite, doc bson.D) error {
	if len(w.Value) <= 1<<20 {
		return nil
	}
	raw, err := bson.Marshal(doc)
	if err != nil {
		return err
	}
	if n := len(raw) + 64; n > MaxDocumentSize { // 64: the _id an insert adds
		return fmt.Errorf("%w: item %q/%q: its document would be %d bytes, over MongoDB's %d", ErrTooLarge, w.NS, w.Key, n, MaxDocumentSize)
	}
	return nil
}

// itemDocument is the document of w: Python's fields, then memvault's.
func (d *driver) itemDocument(w store.RowWrite, f bson.D, indexed bool) (bson.D, error) {
	ns := w.Namespace
	if ns == nil {
		ns = store.ParseNamespace(w.NS)
	}
	doc := bson.D{f[0], f[1], {Key: fNamespace, Value: []string(ns)}}
	stored := false
	if !d.sealed {
		v, err := plainBSON(w.Value)
		switch {
		case err == nil:
			doc = append(doc, bson.E{Key: fValue, Value: v})
			stored = true
		case !errors.Is(err, errNotBSON):
			return nil, err
		}
	}
	if !stored {
		doc = append(doc, bson.E{Key: fMVValue, Value: bson.Binary{Data: w.Value}})
	}
	doc = append(doc,
		bson.E{Key: fCreatedAt, Value: w.Created}, bson.E{Key: fUpdatedAt, Value: w.Updated},
		bson.E{Key: fMVCreated, Value: w.Created.UnixNano()}, bson.E{Key: fMVUpdated, Value: w.Updated.UnixNano()})
	if !w.Expires.IsZero() {
		doc = append(doc, bson.E{Key: fMVExpires, Value: w.Expires.UnixNano()})
		if d.ttlIndexed {
			doc = append(doc, bson.E{Key: fMVExpiresAt, Value: w.Expires})
		}
	}
	if w.TTLMinutes > 0 {
		doc = append(doc, bson.E{Key: fMVTTL, Value: int32(w.TTLMinutes)})
	}
	if indexed {
		doc = append(doc, bson.E{Key: fMVIndexed, Value: true})
	}
	return doc, nil
}

// encodeVector is a vector as little-endian float32s, as
// store/sqlitestore stores it.
func encodeVector(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, f := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(f))
	}
	return b
}

func decodeVector(b []byte) ([]float32, bool) {
	if len(b)%4 != 0 {
		return nil, false
	}
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v, true
}

var (
	_ store.Driver   = (*driver)(nil)
	_ store.DriverTx = (*tx)(nil)
)

// docID is the _id of cur's current document, copied out of the cursor's
// buffer.
func docID(cur *mongo.Cursor) bson.RawValue {
	v := cur.Current.Lookup("_id")
	v.Value = slices.Clone(v.Value)
	return v
}
