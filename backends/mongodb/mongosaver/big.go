package mongosaver

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"slices"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/memvault/memvault/checkpointer"
)

// Values too large for a checkpoint document. MongoDB refuses a document
// over 16 MiB (MaxDocumentSize; FerretDB accepts it, so the driver checks
// the size itself). A checkpoint's document holds all its values, so when
// it would exceed the limit its largest values move, one by one until it
// fits, to memvault_big_values, in chunks of bigChunk bytes keyed by
// (thread, namespace, channel, version, seq); the document keeps their
// rows without data (valueDoc.Big) and memvault_big marks it. The chunks
// are written before the document, so a crash between leaves chunks no
// document references (deleted with their thread), never a document
// without its values. Python and JS do not see such values (they could
// not store them either); memvault reads them back whole.
//
// A removal deletes the chunks of the values no remaining checkpoint of
// the namespace references, after the documents; a pending write, one
// document per write in every layout, over the limit is refused
// (ErrTooLarge), as is a checkpoint whose document is over the limit
// with every value moved out (its metadata alone).
const (
	bigCol   = "memvault_big_values"
	bigChunk = 8 << 20
	fBig     = "memvault_big"
	bigIndex = "memvault_big_values_key"
)

type bigChunkDoc struct {
	Thread string `bson:"thread_id"`
	NS     string `bson:"checkpoint_ns"`
	Key    string `bson:"key"`
	Seq    int    `bson:"seq"`
	N      int    `bson:"n"`
	Type   string `bson:"type"`
	Data   []byte `bson:"data"`
}

// fitDocument makes d fit in MaxDocumentSize, moving its largest values
// out (d.big) as needed, and keeps its encoding in d.raw for replaceCP.
func (dr *driver) fitDocument(d *cpDoc, p *checkpointer.PutRows, values []checkpointer.ValueRow) error {
	raw, err := bson.Marshal(d)
	if err != nil {
		return fmt.Errorf("%w: checkpoint %q: %w", ErrDocument, d.ID, err)
	}
	moved := map[string]bool{}
	for len(raw) > MaxDocumentSize {
		best := -1
		for i, v := range values {
			if !moved[v.Channel] && len(v.Data) > 0 && (best < 0 || len(v.Data) > len(values[best].Data)) {
				best = i
			}
		}
		if best < 0 {
			return fmt.Errorf("%w: checkpoint %q of thread %q is %d bytes without its values, over the %d-byte limit of a MongoDB document; nothing was stored",
				ErrTooLarge, d.ID, d.Thread, len(raw), MaxDocumentSize)
		}
		moved[values[best].Channel] = true
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
		for _, v := range out {
			nd.Values = append(nd.Values, valueDoc{Channel: v.Channel, Version: v.Version, Type: v.Type, Big: true})
		}
		slices.SortFunc(nd.Values, func(a, b valueDoc) int { return cmp.Compare(a.Channel, b.Channel) })
		nd.Keys = valueKeys(values)
		big := true
		nd.HasBig = &big
		nd.big = out
		*d = *nd
		if raw, err = bson.Marshal(d); err != nil {
			return fmt.Errorf("%w: checkpoint %q: %w", ErrDocument, d.ID, err)
		}
	}
	d.raw = raw
	return nil
}

// writeBig stores the chunks of d's moved values: kept when already
// stored (a put: a (channel, version) keeps its first value), or replacing
// them (an overwrite).
func (dr *driver) writeBig(ctx context.Context, d *cpDoc, keepFirst bool) error {
	for _, v := range d.big {
		key := valueKey(v.Channel, v.Version)
		n := max(1, (len(v.Data)+bigChunk-1)/bigChunk)
		f := bson.D{{Key: fThread, Value: d.Thread}, {Key: fNS, Value: d.NS}, {Key: "key", Value: key}}
		if !keepFirst {
			if _, err := dr.big.DeleteMany(ctx, f); err != nil {
				return fmt.Errorf("put checkpoint %q: large value of %q: %w", d.ID, v.Channel, err)
			}
		}
		for seq := range n {
			chunk := v.Data[seq*bigChunk : min(len(v.Data), (seq+1)*bigChunk)]
			_, err := dr.big.UpdateOne(ctx, append(slices.Clone(f), bson.E{Key: "seq", Value: seq}),
				bson.D{{Key: "$setOnInsert", Value: bson.D{{Key: "n", Value: n}, {Key: "type", Value: v.Type}, {Key: "data", Value: bson.Binary{Data: chunk}}}}},
				options.UpdateOne().SetUpsert(true))
			if err != nil && !mongo.IsDuplicateKeyError(err) {
				return fmt.Errorf("put checkpoint %q: large value of %q: %w", d.ID, v.Channel, err)
			}
		}
	}
	return nil
}

// fullRows are doc's value rows with the data of its moved values read
// back.
func (dr *driver) fullRows(ctx context.Context, doc *cpDoc) ([]checkpointer.ValueRow, error) {
	rows, err := doc.rows()
	if err != nil || doc.HasBig == nil {
		return rows, err
	}
	var keys []string
	for _, v := range doc.Values {
		if v.Big {
			keys = append(keys, valueKey(v.Channel, v.Version))
		}
	}
	cur, err := dr.big.Find(ctx, bson.D{{Key: fThread, Value: doc.Thread}, {Key: fNS, Value: doc.NS}, {Key: "key", Value: bson.D{{Key: "$in", Value: keys}}}},
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
		if !slices.ContainsFunc(doc.Values, func(v valueDoc) bool { return v.Big && v.Channel == r.Channel }) {
			continue
		}
		key := valueKey(r.Channel, r.Version)
		var buf bytes.Buffer
		n, got := -1, 0
		for _, c := range chunks {
			if c.Key != key {
				continue
			}
			if n < 0 {
				n = c.N
			}
			// Chunks come in seq order; one beyond the first writer's
			// count (a later writer of the same key that lost) is not
			// the value's.
			if c.Seq == got && c.Seq < n {
				buf.Write(c.Data)
				got++
			}
		}
		if n < 0 || got != n {
			return nil, fmt.Errorf("%w: checkpoint %q: the large value of channel %q (version %s) is missing", ErrDocument, doc.ID, r.Channel, r.Version)
		}
		r.Type = chunks[slices.IndexFunc(chunks, func(c bigChunkDoc) bool { return c.Key == key })].Type
		r.Data = buf.Bytes()
	}
	return rows, nil
}

// dropBig deletes the chunks of keys in (thread, ns); all of the thread's
// when keys is nil.
func (dr *driver) dropBig(ctx context.Context, thread string, ns *string, keys []string) error {
	f := bson.D{{Key: fThread, Value: thread}}
	if ns != nil {
		f = append(f, bson.E{Key: fNS, Value: *ns}, bson.E{Key: "key", Value: bson.D{{Key: "$in", Value: keys}}})
	}
	if _, err := dr.big.DeleteMany(ctx, f); err != nil {
		return fmt.Errorf("delete large values: %w", err)
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
