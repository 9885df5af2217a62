package mongosaver

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/checkpointer/engine"
	"github.com/memvault/memvault/jsonvalue"
	"github.com/memvault/memvault/serde"
)

// Field names of Python's MongoDBSaver documents, and memvault's own.
const (
	fThread   = "thread_id"
	fNS       = "checkpoint_ns"
	fID       = "checkpoint_id"
	fParent   = "parent_checkpoint_id"
	fType     = "type"
	fCP       = "checkpoint"
	fMeta     = "metadata"
	fTask     = "task_id"
	fPath     = "task_path"
	fIdx      = "idx"
	fChannel  = "channel"
	fValue    = "value"
	fValues   = "memvault_values"
	fVersion  = "memvault_v"
	fKeys     = "memvault_keys"
	typeJSON  = serde.TypeJSON
	checkpts  = "checkpoints"
	writesCol = "checkpoint_writes"
)

// cpDoc is a checkpoints document. Python's fields come first; the
// memvault_ fields are ignored by Python and JS readers.
type cpDoc struct {
	Thread string        `bson:"thread_id"`
	NS     string        `bson:"checkpoint_ns"`
	ID     string        `bson:"checkpoint_id"`
	Parent *string       `bson:"parent_checkpoint_id"`
	Type   string        `bson:"type"`
	CP     []byte        `bson:"checkpoint"`
	Meta   bson.RawValue `bson:"metadata"`
	// MetaSearch is JS's metadata_search, the metadata as plain BSON
	// that JS's list(filter) matches; written in the JS layout only.
	MetaSearch any `bson:"metadata_search,omitempty"`
	// Values are the checkpoint's channel value rows, sealed as the
	// engine sealed them (see doc.go).
	Values []valueDoc `bson:"memvault_values,omitempty"`
	// Keys name Values, one valueKey each: FerretDB v1 cannot match
	// two fields of one array element ($elemMatch), so a put finds the
	// documents holding a (channel, version) through them.
	Keys []string `bson:"memvault_keys,omitempty"`
	// V is the document's format version, for removals that read heads
	// without decoding documents; absent on documents Python wrote.
	V *int `bson:"memvault_v,omitempty"`
	// HasBig marks a document some of whose values are in
	// memvault_big_values (big.go).
	HasBig *bool `bson:"memvault_big,omitempty"`
	// BigGens are the generations of the chunks its large values are
	// stored under (valueDoc.G): what a removal keeps (big.go).
	BigGens []string `bson:"memvault_big_gens,omitempty"`

	big      []checkpointer.ValueRow // values to write to memvault_big_values first
	bigFresh map[string]bool         // channels of big whose generation is new (written)
	raw      []byte                  // the document's encoding, checked for size

	p *parsed // the checkpoint binary taken apart, once (form.go)
}

type valueDoc struct {
	Channel string `bson:"c"`
	Version string `bson:"v"`
	Type    string `bson:"t"`
	Data    []byte `bson:"d,omitempty"`
	// Big: the value is in memvault_big_values (big.go).
	Big bool `bson:"b,omitempty"`
	// G is the generation of its chunks (big.go); empty on documents
	// written before generations.
	G string `bson:"g,omitempty"`
}

type writeDoc struct {
	Thread  string `bson:"thread_id"`
	NS      string `bson:"checkpoint_ns"`
	ID      string `bson:"checkpoint_id"`
	Task    string `bson:"task_id"`
	Path    string `bson:"task_path"`
	Idx     int    `bson:"idx"`
	Channel string `bson:"channel"`
	Type    string `bson:"type"`
	Value   []byte `bson:"value"`
}

func (w *writeDoc) row() checkpointer.WriteRow {
	return checkpointer.WriteRow{Task: w.Task, Path: w.Path, Idx: w.Idx, Channel: w.Channel, Type: w.Type, Data: w.Value}
}

// newCPDoc builds the document of p holding values: the checkpoint binary
// with the values Python and JS can read inline, the others in
// memvault_values (form.go); the metadata in Python's layout, or in JS's
// when the driver writes it (Options.JSLayout).
//
// known names the stored generations of large values the document re-uses
// (fitDocument): a put's, found in the documents it read; an overwrite's,
// those it stored already.
func (dr *driver) newCPDoc(thread string, p *checkpointer.PutRows, values []checkpointer.ValueRow, known map[chanVersion]string) (*cpDoc, error) {
	var md bson.RawValue
	var search any
	var err error
	if dr.jsLayout {
		md, search, err = jsMetadata(p.Meta)
	} else {
		md, err = encodeMetadata(p.Meta)
	}
	if err != nil {
		return nil, fmt.Errorf("checkpoint %q: %w", p.ID, err)
	}
	d, err := dr.buildDoc(thread, p, md, search, values)
	if err != nil {
		return nil, err
	}
	if err := dr.fitDocument(d, p, values, known); err != nil {
		return nil, err
	}
	return d, nil
}

// buildDoc is the document of p with values, metadata md and search.
func (dr *driver) buildDoc(thread string, p *checkpointer.PutRows, md bson.RawValue, search any, values []checkpointer.ValueRow) (*cpDoc, error) {
	typ, bin, rest, err := encodeCheckpoint(p.Doc, values)
	if err != nil {
		return nil, fmt.Errorf("checkpoint %q: %w", p.ID, err)
	}
	d := &cpDoc{Thread: thread, NS: p.NS, ID: p.ID, Type: typ, CP: bin, Meta: md, MetaSearch: search}
	if p.Parent != "" {
		parent := p.Parent
		d.Parent = &parent
	}
	v := p.V
	d.V = &v
	d.Values = make([]valueDoc, len(rest))
	for i, r := range rest {
		d.Values[i] = valueDoc{Channel: r.Channel, Version: r.Version, Type: r.Type, Data: r.Data}
	}
	slices.SortFunc(d.Values, func(a, b valueDoc) int { return cmp.Compare(a.Channel, b.Channel) })
	// Keys name every value, inline or not.
	d.Keys = valueKeys(values)
	return d, nil
}

func (d *cpDoc) parent() string {
	if d.Parent == nil {
		return ""
	}
	return *d.Parent
}

func (d *cpDoc) valueRows() []checkpointer.ValueRow {
	out := make([]checkpointer.ValueRow, len(d.Values))
	for i, v := range d.Values {
		out[i] = checkpointer.ValueRow{Channel: v.Channel, Version: v.Version, Type: v.Type, Data: v.Data}
	}
	return out
}

// decoded parses the checkpoint binary (form.go).
func (d *cpDoc) decoded() (*engine.Document, error) {
	p, err := d.parse()
	if err != nil {
		return nil, err
	}
	return p.dec, nil
}

// version is the document's format version: memvault_v, else decoded.
func (d *cpDoc) version() (int, error) {
	if d.V != nil {
		return *d.V, nil
	}
	doc, err := d.decoded()
	if err != nil {
		return 0, err
	}
	return doc.V(), nil
}

// stored is d as the engine reads it (writes and sends added by the
// caller).
func (d *cpDoc) stored(rows []checkpointer.ValueRow) (*checkpointer.StoredCheckpoint, error) {
	meta, err := decodeMetadata(d.Meta)
	if err != nil {
		return nil, fmt.Errorf("checkpoint %q: %w", d.ID, err)
	}
	p, err := d.parse()
	if err != nil {
		return nil, err
	}
	return &checkpointer.StoredCheckpoint{Thread: d.Thread, NS: d.NS, ID: d.ID, Parent: d.parent(), Doc: p.doc, Meta: meta,
		Decoded: p.dec, Values: rows}, nil
}

// runID is the metadata's run_id when it is a string.
func (d *cpDoc) runID() string {
	var v any
	switch d.Meta.Type {
	case bson.TypeEmbeddedDocument:
		rv, err := d.Meta.Document().LookupErr("run_id")
		if err != nil {
			return ""
		}
		if v, err = leafValue(rv); err != nil {
			return ""
		}
	case bson.TypeBinary:
		meta, err := decodeMetadata(d.Meta)
		if err != nil {
			return ""
		}
		m, err := jsonvalue.Unmarshal(meta)
		if err != nil {
			return ""
		}
		mm, _ := m.(map[string]any)
		v = mm["run_id"]
	}
	s, _ := v.(string)
	return s
}

// valueKey is the memvault_keys entry of a (channel, version): the JSON
// array of the two, which no other pair spells.
func valueKey(channel, version string) string {
	b, _ := json.Marshal([2]string{channel, version})
	return string(b)
}
