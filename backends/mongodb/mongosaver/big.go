package mongosaver

import (
	"bytes"
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"slices"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/memvault/memvault/checkpointer"
)

// Values too large for a checkpoint document. MongoDB refuses a document
// over 16 MiB (MaxDocumentSize; FerretDB accepts it, so the driver checks
// the size itself). A checkpoint's document holds all its values, so when
// it would exceed the limit its largest values move, the fewest that make
// it fit, to memvault_big_values, in chunks of bigChunk bytes keyed by
// (thread, namespace, channel, version, generation, seq); the document
// keeps their rows without data (valueDoc.Big) naming the generation
// (valueDoc.G, and every generation it references in memvault_big_gens),
// and memvault_big marks it. A generation is random, new for each value a
// write stores: a put re-using a stored (channel, version) references the
// generation already stored, a put of a new one and an overwrite (import,
// copy, re-encryption) write a new generation. Reads take only the
// generation the document names. So chunks are never changed in place:
// the chunks are written before the document, and a crash between leaves
// a generation no document references — never a document without its
// values, nor one reading another attempt's value (with integer versions
// a re-run step stores the same version with another value) or a splice
// of two. Python and JS do not see such values (they could not store them
// either); memvault reads them back whole.
//
// Chunks of generations no document references are garbage: a removal in
// a namespace holding large values, and an overwrite, delete those of
// the namespace, after the documents; deleting a thread deletes all of
// its chunks. A pending write, one document per write in every layout,
// over the limit is refused (ErrTooLarge), as is a checkpoint whose
// document is over the limit with every value moved out (its metadata
// alone).
const (
	bigCol   = "memvault_big_values"
	bigChunk = 8 << 20
	fBig     = "memvault_big"
	fBigGens = "memvault_big_gens"
	bigIndex = "memvault_big_values_gen"
	// oldBigIndex is the unique index before generations: (thread, ns,
	// key, seq) admits one generation only, so Setup drops it.
	oldBigIndex = "memvault_big_values_key"
)

type bigChunkDoc struct {
	Thread string `bson:"thread_id"`
	NS     string `bson:"checkpoint_ns"`
	Key    string `bson:"key"`
	Gen    string `bson:"gen,omitempty"` // absent on chunks written before generations
	Seq    int    `bson:"seq"`
	N      int    `bson:"n"`
	Type   string `bson:"type"`
	Data   []byte `bson:"data"`
}

// bigRefBytes bounds what a moved value's reference adds to the document
// (its row's memvault_big flag and generation, the generation's entry in
// memvault_big_gens): moving a value of n bytes saves at least
// n-bigRefBytes. fitDocument uses it to choose the values to move.
const bigRefBytes = 128

// bigBatchBytes bounds the chunk data of one InsertMany of writeBig, well
// under MongoDB's 48 MB message limit (the driver would split a larger
// batch itself; this bounds the message memvault builds).
const bigBatchBytes = 2 * bigChunk

// fitDocument makes d fit in MaxDocumentSize, moving its largest values
// out (d.big) as needed, and keeps its encoding in d.raw for replaceCP.
// A moved value whose (channel, version) known names a stored generation
// of (a put keeping the first value) references it; the others get a new
// generation, written by writeBig.
//
// The values to move are chosen from the document's excess size, largest
// first, until their data (less bigRefBytes each) covers it; the document
// is then rebuilt and encoded once. A value's inline form is at least its
// data, so one round normally suffices; another round (with the values
// left) runs only if it does not, so the cost stays a few encodings of
// the document, whatever its number of values.
func (dr *driver) fitDocument(d *cpDoc, p *checkpointer.PutRows, values []checkpointer.ValueRow, known map[chanVersion]string) error {
	raw, err := bson.Marshal(d)
	if err != nil {
		return fmt.Errorf("%w: checkpoint %q: %w", ErrDocument, d.ID, err)
	}
	if len(raw) <= MaxDocumentSize {
		d.raw = raw
		return nil
	}
	// The candidates, largest first (by channel among equals, so the
	// choice does not depend on the order of values).
	order := make([]int, 0, len(values))
	for i, v := range values {
		if len(v.Data) > 0 {
			order = append(order, i)
		}
	}
	slices.SortFunc(order, func(a, b int) int {
		if c := cmp.Compare(len(values[b].Data), len(values[a].Data)); c != 0 {
			return c
		}
		return cmp.Compare(values[a].Channel, values[b].Channel)
	})
	next := 0
	moved := map[string]bool{}
	gens := map[string]string{} // channel -> generation
	fresh := map[string]bool{}  // channels whose generation is new
	for len(raw) > MaxDocumentSize {
		if next == len(order) {
			return fmt.Errorf("%w: checkpoint %q of thread %q is %d bytes without its values, over the %d-byte limit of a MongoDB document; nothing was stored",
				ErrTooLarge, d.ID, d.Thread, len(raw), MaxDocumentSize)
		}
		excess := len(raw) - MaxDocumentSize
		for saved := 0; next < len(order) && saved < excess; next++ {
			v := values[order[next]]
			moved[v.Channel] = true
			saved += len(v.Data) - bigRefBytes
		}
		var inline, out []checkpointer.ValueRow
		for _, v := range values {
			if moved[v.Channel] {
				out = append(out, v)
			} else {
				inline = append(inline, v)
			}
		}
		nd, err := dr.buildDoc(d.Thread, p, d.Meta, d.MetaSearch, inline)
		if err != nil {
			return err
		}
		refs := make([]string, 0, len(out))
		for _, v := range out {
			g, ok := gens[v.Channel]
			if !ok {
				if g = known[chanVersion{v.Channel, v.Version}]; g == "" {
					g = newGen()
					fresh[v.Channel] = true
				}
				gens[v.Channel] = g
			}
			refs = append(refs, g)
			nd.Values = append(nd.Values, valueDoc{Channel: v.Channel, Version: v.Version, Type: v.Type, Big: true, G: g})
		}
		slices.Sort(refs)
		nd.BigGens = slices.Compact(refs)
		slices.SortFunc(nd.Values, func(a, b valueDoc) int { return cmp.Compare(a.Channel, b.Channel) })
		nd.Keys = valueKeys(values)
		big := true
		nd.HasBig = &big
		nd.big = out
		nd.bigFresh = fresh
		*d = *nd
		if raw, err = bson.Marshal(d); err != nil {
			return fmt.Errorf("%w: checkpoint %q: %w", ErrDocument, d.ID, err)
		}
	}
	d.raw = raw
	return nil
}

// writeBig stores the chunks of d's moved values that have a new
// generation (d.bigFresh); the others are stored already. Chunks are
// only ever inserted, under a generation no document references yet,
// with InsertMany in batches of at most bigBatchBytes of data (a chunk
// larger alone), so a put's commands do not grow with its number of
// values.
func (dr *driver) writeBig(ctx context.Context, d *cpDoc) error {
	gens := make(map[string]string, len(d.big))
	for _, vd := range d.Values {
		if vd.Big {
			gens[vd.Channel] = vd.G
		}
	}
	var batch []any
	size := 0
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		if dr.beforeBigChunks != nil {
			dr.beforeBigChunks()
		}
		if _, err := dr.big.InsertMany(ctx, batch); err != nil {
			return fmt.Errorf("put checkpoint %q: large values: %w", d.ID, err)
		}
		batch, size = batch[:0], 0
		return nil
	}
	for _, v := range d.big {
		if !d.bigFresh[v.Channel] {
			continue
		}
		key := valueKey(v.Channel, v.Version)
		n := max(1, (len(v.Data)+bigChunk-1)/bigChunk)
		for seq := range n {
			chunk := v.Data[seq*bigChunk : min(len(v.Data), (seq+1)*bigChunk)]
			if size > 0 && size+len(chunk) > bigBatchBytes {
				if err := flush(); err != nil {
					return err
				}
			}
			batch = append(batch, bigChunkDoc{Thread: d.Thread, NS: d.NS, Key: key, Gen: gens[v.Channel], Seq: seq, N: n, Type: v.Type, Data: chunk})
			size += len(chunk)
		}
	}
	return flush()
}

// newGen is a new generation id for a large value's chunks.
func newGen() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// bigGens are the generations doc's large values are stored under, by
// (channel, version): a put re-using one of those values references them.
func bigGens(doc *cpDoc, into map[chanVersion]string) {
	for _, v := range doc.Values {
		if v.Big && v.G != "" {
			into[chanVersion{v.Channel, v.Version}] = v.G
		}
	}
}

// fullRows are doc's value rows with the data of its moved values read
// back.
func (dr *driver) fullRows(ctx context.Context, doc *cpDoc) ([]checkpointer.ValueRow, error) {
	rows, err := doc.rows()
	if err != nil || doc.HasBig == nil {
		return rows, err
	}
	// Only the generation the document names: other generations of the
	// same key are other attempts' (or garbage) values.
	var or bson.A
	for _, v := range doc.Values {
		if v.Big {
			gen := any(v.G)
			if v.G == "" {
				gen = bson.D{{Key: "$exists", Value: false}}
			}
			or = append(or, bson.D{{Key: "key", Value: valueKey(v.Channel, v.Version)}, {Key: "gen", Value: gen}})
		}
	}
	cur, err := dr.big.Find(ctx, bson.D{{Key: fThread, Value: doc.Thread}, {Key: fNS, Value: doc.NS}, {Key: "$or", Value: or}},
		options.Find().SetSort(bson.D{{Key: "key", Value: 1}, {Key: "seq", Value: 1}}))
	if err != nil {
		return nil, fmt.Errorf("read large values of checkpoint %q: %w", doc.ID, err)
	}
	var chunks []bigChunkDoc
	if err := cur.All(ctx, &chunks); err != nil {
		return nil, fmt.Errorf("read large values of checkpoint %q: %w", doc.ID, err)
	}
	for i := range rows {
		r := &rows[i]
		at := slices.IndexFunc(doc.Values, func(v valueDoc) bool { return v.Big && v.Channel == r.Channel })
		if at < 0 {
			continue
		}
		gen := doc.Values[at].G
		key := valueKey(r.Channel, r.Version)
		var buf bytes.Buffer
		n, got := -1, 0
		for _, c := range chunks {
			if c.Key != key || c.Gen != gen {
				continue
			}
			if n < 0 {
				n = c.N
			}
			// Chunks come in seq order; one beyond the count (a
			// writer before generations that lost) is not the value's.
			if c.Seq == got && c.Seq < n {
				buf.Write(c.Data)
				got++
			}
		}
		if n < 0 || got != n {
			return nil, fmt.Errorf("%w: checkpoint %q: the large value of channel %q (version %s) is missing", ErrDocument, doc.ID, r.Channel, r.Version)
		}
		r.Type = chunks[slices.IndexFunc(chunks, func(c bigChunkDoc) bool { return c.Key == key && c.Gen == gen })].Type
		r.Data = buf.Bytes()
	}
	return rows, nil
}

// dropBig deletes every chunk of thread.
func (dr *driver) dropBig(ctx context.Context, thread string) error {
	if _, err := dr.big.DeleteMany(ctx, bson.D{{Key: fThread, Value: thread}}); err != nil {
		return fmt.Errorf("delete large values: %w", err)
	}
	return nil
}

// orphanChunkGrace is how old the chunks of a thread that holds no
// checkpoint must be before a sweep drops them (dropOrphanBig): a put
// writes its chunks before its checkpoint, so younger ones may be those
// of a put still under way.
const orphanChunkGrace = time.Hour

// dropOrphanBig deletes the chunks, written before now-orphanChunkGrace,
// of threads that hold no checkpoint, and returns how many went. A thread
// deleted by a writer that knows nothing of them — LangGraph's
// deleteThread deletes checkpoints and writes only — or a first put that
// died before its checkpoint leaves them, and no removal finds them: a
// removal collects the chunks of the threads it finds by their
// checkpoints. Two commands a round of 1 000 threads, besides the
// cursor's.
func (dr *driver) dropOrphanBig(ctx context.Context, now time.Time) (int64, error) {
	old := bson.D{{Key: "_id", Value: bson.D{{Key: "$lt", Value: bson.NewObjectIDFromTimestamp(now.Add(-orphanChunkGrace))}}}}
	// The threads come through a cursor, not one distinct command, whose
	// reply must fit in one 16 MB document: ~370 000 thread ids.
	cur, err := dr.big.Aggregate(ctx, mongo.Pipeline{
		{{Key: "$match", Value: old}},
		{{Key: "$group", Value: bson.D{{Key: "_id", Value: "$" + fThread}}}},
	})
	if err != nil {
		return 0, fmt.Errorf("large values of deleted threads: %w", err)
	}
	defer cur.Close(ctx)
	var dropped int64
	batch := make([]string, 0, orphanBatch)
	for {
		more := cur.Next(ctx)
		if more {
			var g struct {
				Thread string `bson:"_id"`
			}
			if err := cur.Decode(&g); err != nil {
				return dropped, fmt.Errorf("large values of deleted threads: %w", err)
			}
			batch = append(batch, g.Thread)
		}
		if len(batch) == orphanBatch || (!more && len(batch) > 0) {
			n, err := dr.dropOrphanBatch(ctx, old, batch)
			dropped += n
			if err != nil {
				return dropped, err
			}
			batch = batch[:0]
		}
		if !more {
			break
		}
	}
	if err := cur.Err(); err != nil {
		return dropped, fmt.Errorf("large values of deleted threads: %w", err)
	}
	return dropped, nil
}

// orphanBatch is how many threads dropOrphanBig asks about at once.
const orphanBatch = 1000

// dropOrphanBatch deletes the chunks matching old of the threads of batch
// that hold no checkpoint.
func (dr *driver) dropOrphanBatch(ctx context.Context, old bson.D, batch []string) (int64, error) {
	var live []string
	if err := dr.cps.Distinct(ctx, fThread, bson.D{{Key: fThread, Value: bson.D{{Key: "$in", Value: batch}}}}).Decode(&live); err != nil {
		return 0, fmt.Errorf("large values of deleted threads: %w", err)
	}
	held := make(map[string]bool, len(live))
	for _, th := range live {
		held[th] = true
	}
	gone := slices.DeleteFunc(slices.Clone(batch), func(th string) bool { return held[th] })
	if len(gone) == 0 {
		return 0, nil
	}
	res, err := dr.big.DeleteMany(ctx, append(slices.Clone(old), bson.E{Key: fThread, Value: bson.D{{Key: "$in", Value: gone}}}))
	if err != nil {
		return 0, fmt.Errorf("large values of deleted threads: %w", err)
	}
	return res.DeletedCount, nil
}

// collectBig deletes the chunks of (thread, ns) no document of the
// namespace references: generations none names (a dead put's, an
// overwrite's predecessors, removed checkpoints'), and chunks written
// before generations whose key no document written before them holds.
// The caller holds the lease.
func (dr *driver) collectBig(ctx context.Context, thread, ns string) error {
	docs, err := dr.findCPs(ctx, nsFilter(thread, ns), options.Find().SetProjection(bson.D{{Key: fKeys, Value: 1}, {Key: fBig, Value: 1}, {Key: fBigGens, Value: 1}}))
	if err != nil {
		return fmt.Errorf("collect large values: %w", err)
	}
	gens, keys := bson.A{}, bson.A{}
	for _, d := range docs {
		for _, g := range d.BigGens {
			gens = append(gens, g)
		}
		// Only documents written before generations reference chunks
		// without one (by key).
		if d.HasBig != nil && len(d.BigGens) == 0 {
			for _, k := range d.Keys {
				keys = append(keys, k)
			}
		}
	}
	_, err = dr.big.DeleteMany(ctx, append(nsFilter(thread, ns), bson.E{Key: "$or", Value: bson.A{
		bson.D{{Key: "gen", Value: bson.D{{Key: "$exists", Value: true}, {Key: "$nin", Value: gens}}}},
		bson.D{{Key: "gen", Value: bson.D{{Key: "$exists", Value: false}}}, {Key: "key", Value: bson.D{{Key: "$nin", Value: keys}}}},
	}}))
	if err != nil {
		return fmt.Errorf("collect large values: %w", err)
	}
	return nil
}

func valueKeys(values []checkpointer.ValueRow) []string {
	keys := make([]string, len(values))
	for i, v := range values {
		keys[i] = valueKey(v.Channel, v.Version)
	}
	slices.Sort(keys)
	return keys
}
