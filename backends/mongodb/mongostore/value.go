package mongostore

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/memvault/memvault/jsonvalue"
)

// errNotBSON reports a value with no exact BSON form (see toBSON): it is
// then stored as its JSON text in memvaultValue.
var errNotBSON = errors.New("no exact BSON form")

// maxBSONDepth bounds the nesting of a value stored as a BSON document:
// MongoDB refuses documents nested deeper than 100 levels (with the item
// document around it). A deeper value is stored as JSON text.
const maxBSONDepth = 90

// plainBSON returns the value column raw (JSON text of an object, as the
// engine encodes it without serializer) as the BSON document Python's
// MongoDBStore keeps in "value", or errNotBSON when BSON cannot hold it
// exactly: an integer beyond int64, a key MongoDB reads as a path or an
// operator ('.', a leading '$', NUL, empty), a string with NUL, nesting
// deeper than maxBSONDepth, an array directly inside an array (FerretDB
// v1 refuses them; MongoDB would not). The conversion is exact for what it accepts:
// bsonModel gives the same model value back, whose JSON the engine reads
// as it wrote it.
func plainBSON(raw []byte) (bson.D, error) {
	v, err := jsonvalue.Unmarshal(raw)
	if err != nil {
		return nil, err
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, errNotBSON
	}
	d, err := docBSON(m, 0)
	if err != nil {
		return nil, err
	}
	return d, nil
}

func docBSON(m map[string]any, depth int) (bson.D, error) {
	if depth > maxBSONDepth {
		return nil, errNotBSON
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		if k == "" || strings.ContainsAny(k, ".\x00") || k[0] == '$' {
			return nil, errNotBSON
		}
		keys = append(keys, k)
	}
	slices.Sort(keys)
	d := make(bson.D, 0, len(keys))
	for _, k := range keys {
		v, err := toBSON(m[k], depth+1)
		if err != nil {
			return nil, err
		}
		d = append(d, bson.E{Key: k, Value: v})
	}
	return d, nil
}

func toBSON(v any, depth int) (any, error) {
	switch x := v.(type) {
	case nil, bool, int64:
		return x, nil
	case float64:
		// The JSON model has one zero (jsonvalue: -0.0 reads as 0.0), so
		// no sign is lost here, where FerretDB v1 would drop it.
		return x, nil
	case string:
		if strings.IndexByte(x, 0) >= 0 {
			return nil, errNotBSON
		}
		return x, nil
	case []byte:
		return bson.Binary{Subtype: bson.TypeBinaryGeneric, Data: x}, nil
	case map[string]any:
		return docBSON(x, depth)
	case []any:
		if depth > maxBSONDepth {
			return nil, errNotBSON
		}
		a := make(bson.A, len(x))
		for i, e := range x {
			if _, nested := e.([]any); nested {
				return nil, errNotBSON // FerretDB v1 refuses arrays in arrays
			}
			var err error
			if a[i], err = toBSON(e, depth+1); err != nil {
				return nil, err
			}
		}
		return a, nil
	}
	return nil, errNotBSON // uint64, *big.Int
}

// bsonJSON returns the JSON text (the value column the engine reads) of a
// "value" document: one memvault wrote (exact, see plainBSON) or one
// Python's MongoDBStore wrote, whose other BSON types read as JSON holds
// them: int32 as an integer, a date as RFC 3339 text, an ObjectId as hex,
// a decimal as a number. Other types fail.
func bsonJSON(doc bson.Raw) ([]byte, error) {
	m, err := bsonModel(bson.RawValue{Type: bson.TypeEmbeddedDocument, Value: doc})
	if err != nil {
		return nil, err
	}
	return jsonvalue.Marshal(m)
}

func bsonModel(rv bson.RawValue) (any, error) {
	switch rv.Type {
	case bson.TypeNull, bson.TypeUndefined:
		return nil, nil
	case bson.TypeBoolean:
		return rv.Boolean(), nil
	case bson.TypeInt32:
		return int64(rv.Int32()), nil
	case bson.TypeInt64:
		return rv.Int64(), nil
	case bson.TypeDouble:
		f := rv.Double()
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return nil, fmt.Errorf("a %v double has no JSON form", f)
		}
		return f, nil
	case bson.TypeString:
		return rv.StringValue(), nil
	case bson.TypeBinary:
		_, data := rv.Binary()
		return slices.Clone(data), nil
	case bson.TypeDateTime:
		return rv.Time().UTC().Format(time.RFC3339Nano), nil
	case bson.TypeObjectID:
		return rv.ObjectID().Hex(), nil
	case bson.TypeDecimal128:
		// "1E+2" is a JSON number; "NaN" and "Infinity" fail.
		return jsonvalue.Number(json.Number(rv.Decimal128().String()))
	case bson.TypeEmbeddedDocument:
		elems, err := rv.Document().Elements()
		if err != nil {
			return nil, err
		}
		m := make(map[string]any, len(elems))
		for _, e := range elems {
			if m[e.Key()], err = bsonModel(e.Value()); err != nil {
				return nil, err
			}
		}
		return m, nil
	case bson.TypeArray:
		vals, err := rv.Array().Values()
		if err != nil {
			return nil, err
		}
		a := make([]any, len(vals))
		for i, e := range vals {
			if a[i], err = bsonModel(e); err != nil {
				return nil, err
			}
		}
		return a, nil
	}
	return nil, fmt.Errorf("BSON type %v has no JSON form", rv.Type)
}
