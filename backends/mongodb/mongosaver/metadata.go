package mongosaver

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/memvault/memvault/jsonvalue"
	"github.com/memvault/memvault/serde"
)

// Python's MongoDBSaver stores metadata as a nested document whose dict
// values are recursed and whose every other value is the pair
// [serde type, serde bytes] (langgraph-checkpoint-mongodb utils.py
// dumps_metadata). Its list(filter=...) matches those bytes exactly, so the
// leaves are written with serde.MsgPack, which writes what Python's
// ormsgpack writes (smallest integer and string widths, float64).

// encodeMetadata turns the engine's JSON metadata into Python's nested
// document.
//
// A key MongoDB-protocol servers may refuse as a field name (one holding
// '.' or NUL, or starting with '$') cannot be stored in that shape: such
// metadata is stored as JS's MongoDBSaver stores all metadata, one binary
// of JSON, which memvault reads and Python does not.
func encodeMetadata(meta []byte) (bson.RawValue, error) {
	v, err := jsonvalue.Unmarshal(meta)
	if err != nil {
		return bson.RawValue{}, fmt.Errorf("%w: metadata: %w", ErrDocument, err)
	}
	m, _ := v.(map[string]any)
	if !fieldNames(m) {
		typ, data, err := bson.MarshalValue(bson.Binary{Data: meta})
		return bson.RawValue{Type: typ, Value: data}, err
	}
	d, err := metadataDoc(m)
	if err != nil {
		return bson.RawValue{}, err
	}
	raw, err := bson.Marshal(d)
	if err != nil {
		return bson.RawValue{}, fmt.Errorf("%w: metadata: %w", ErrDocument, err)
	}
	return bson.RawValue{Type: bson.TypeEmbeddedDocument, Value: raw}, nil
}

// jsMetadata is metadata as JS's MongoDBSaver stores it: one binary of
// the JSON (read with the checkpoint's type, "json"), and metadata_search,
// the same metadata as plain BSON for JS's list(filter) — left out when
// the metadata has no exact BSON form (see searchForm): memvault reads
// the binary and filters in the engine, so the checkpoint is stored and
// reads back as on every other backend; only JS's list(filter) misses it.
// Python cannot read it (its loads_metadata wants a document).
func jsMetadata(meta []byte) (bson.RawValue, any, error) {
	v, err := jsonvalue.Unmarshal(meta)
	if err != nil {
		return bson.RawValue{}, nil, fmt.Errorf("%w: metadata: %w", ErrDocument, err)
	}
	typ, data, err := bson.MarshalValue(bson.Binary{Data: meta})
	if err != nil {
		return bson.RawValue{}, nil, fmt.Errorf("%w: metadata: %w", ErrDocument, err)
	}
	m, _ := v.(map[string]any)
	var search any
	if m != nil && searchForm(m, 0) {
		search = m
	}
	return bson.RawValue{Type: typ, Value: data}, search, nil
}

// fieldNames reports whether every key of m, nested maps included, can be
// a field name.
func fieldNames(m map[string]any) bool {
	for k, v := range m {
		if k == "" || strings.HasPrefix(k, "$") || strings.ContainsAny(k, ".\x00") {
			return false
		}
		if sub, ok := v.(map[string]any); ok && !fieldNames(sub) {
			return false
		}
	}
	return true
}

// maxSearchDepth bounds the nesting of metadata_search: MongoDB refuses
// documents nested deeper than 100 levels (with the checkpoint document
// around it).
const maxSearchDepth = 90

// searchForm reports whether v (a jsonvalue model value) has an exact
// BSON form a MongoDB-protocol server stores: every map key, in lists
// too, a field name; no integer beyond int64 (uint64, *big.Int); no array
// directly inside an array (FerretDB v1 refuses "nested arrays"); nesting
// at most maxSearchDepth.
func searchForm(v any, depth int) bool {
	if depth > maxSearchDepth {
		return false
	}
	switch x := v.(type) {
	case nil, bool, int64, float64, string, []byte:
		return true
	case map[string]any:
		for k, e := range x {
			if k == "" || strings.HasPrefix(k, "$") || strings.ContainsAny(k, ".\x00") || !searchForm(e, depth+1) {
				return false
			}
		}
		return true
	case []any:
		for _, e := range x {
			if _, nested := e.([]any); nested || !searchForm(e, depth+1) {
				return false
			}
		}
		return true
	}
	return false // uint64, *big.Int
}

func metadataDoc(m map[string]any) (bson.D, error) {
	d := make(bson.D, 0, len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		v, err := metadataLeaf(m[k])
		if err != nil {
			return nil, fmt.Errorf("metadata key %q: %w", k, err)
		}
		d = append(d, bson.E{Key: k, Value: v})
	}
	return d, nil
}

func metadataLeaf(v any) (any, error) {
	if sub, ok := v.(map[string]any); ok {
		return metadataDoc(sub)
	}
	typ, data, err := serde.MsgPack{}.DumpsTyped(v)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrDocument, err)
	}
	if data == nil {
		data = []byte{}
	}
	return bson.A{typ, bson.Binary{Subtype: 0, Data: data}}, nil
}

// decodeMetadata turns a stored metadata field back into JSON: Python's
// nested document (typed leaves, or the raw JSON bytes of leaves written
// before langgraph-checkpoint-mongodb 0.2.2), or JS's one binary of JSON.
func decodeMetadata(raw bson.RawValue) ([]byte, error) {
	switch raw.Type {
	case bson.TypeBinary:
		_, data := raw.Binary()
		return data, nil
	case bson.TypeEmbeddedDocument:
		m, err := metadataValue(raw.Document())
		if err != nil {
			return nil, err
		}
		return jsonvalue.Marshal(m)
	case bson.TypeNull, 0:
		return []byte("{}"), nil
	}
	return nil, fmt.Errorf("%w: metadata is BSON type %s", ErrDocument, raw.Type)
}

func metadataValue(doc bson.Raw) (map[string]any, error) {
	elems, err := doc.Elements()
	if err != nil {
		return nil, fmt.Errorf("%w: metadata: %w", ErrDocument, err)
	}
	m := make(map[string]any, len(elems))
	for _, e := range elems {
		v, err := leafValue(e.Value())
		if err != nil {
			return nil, fmt.Errorf("metadata key %q: %w", e.Key(), err)
		}
		m[e.Key()] = v
	}
	return m, nil
}

func leafValue(raw bson.RawValue) (any, error) {
	switch raw.Type {
	case bson.TypeEmbeddedDocument:
		return metadataValue(raw.Document())
	case bson.TypeArray:
		vals, err := raw.Array().Values()
		if err != nil || len(vals) != 2 || vals[0].Type != bson.TypeString || vals[1].Type != bson.TypeBinary {
			return nil, fmt.Errorf("%w: metadata leaf is not [type, binary]", ErrDocument)
		}
		_, data := vals[1].Binary()
		v, err := serde.MsgPack{}.LoadsTyped(vals[0].StringValue(), data)
		if err != nil {
			return nil, fmt.Errorf("%w: metadata leaf: %w", ErrDocument, err)
		}
		return v, nil
	case bson.TypeBinary:
		// Before 0.2.2 the leaves were raw JSON bytes.
		_, data := raw.Binary()
		v, err := jsonvalue.Unmarshal(data)
		if err != nil {
			return nil, fmt.Errorf("%w: metadata leaf: %w", ErrDocument, err)
		}
		return v, nil
	}
	return nil, fmt.Errorf("%w: metadata leaf is BSON type %s", ErrDocument, raw.Type)
}
