package mongostore

import (
	"context"
	"strings"
	"time"
	"unicode/utf8"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/memvault/memvault/store"
	"github.com/memvault/memvault/store/engine"
)

// ScanFilter implements engine.FilterTx: Scan that leaves out, in the
// server's query, items whose "value" document fails an equality on a
// string or a boolean (a top-level key, "k": v or "k": {"$eq": v}). That
// is the part of a filter MongoDB matches as the store's filter engine
// does (a string or boolean equals only itself; MongoDB also accepts an
// array holding it, which the engine then rejects: the query may keep too
// many items, never too few). Numbers, ordering operators, $ne, nested
// values, keys MongoDB reads as paths ('.', a leading '$') and keys or
// strings a BSON string cannot carry exactly (NUL, invalid UTF-8) are left
// to the engine, which checks every item it is handed against the whole
// filter anyway. Items whose value is stored as JSON text (memvault_value:
// no exact BSON form, see plainBSON) always pass the query. The engine
// pushes filters down only for a store without serializer.
func (t *tx) ScanFilter(ctx context.Context, prefix store.Namespace, now time.Time, withoutVectors bool, after *store.ScanAfter, limit int, filter map[string]any) ([]store.Row, error) {
	eq := filterCond(filter)
	if len(eq) == 0 {
		return t.Scan(ctx, prefix, now, withoutVectors, after, limit)
	}
	return t.scan(ctx, prefix, now, withoutVectors, after, limit, bson.E{Key: "$or", Value: bson.A{
		eq, bson.D{{Key: fMVValue, Value: bson.D{{Key: "$exists", Value: true}}}},
	}})
}

// filterCond is the condition of the pushed-down part of filter (see
// ScanFilter); empty when nothing of it is pushed down.
func filterCond(filter map[string]any) bson.D {
	var d bson.D
	for k, c := range filter {
		if k == "" || strings.ContainsAny(k, ".\x00") || k[0] == '$' || !utf8.ValidString(k) {
			continue
		}
		if ops, ok := c.(map[string]any); ok {
			if len(ops) != 1 {
				continue
			}
			if c, ok = ops["$eq"]; !ok {
				continue
			}
		}
		switch v := c.(type) {
		case string:
			// BSON strings are UTF-8: a server that checks would refuse
			// the whole search, one that repairs would compare U+FFFD.
			if strings.IndexByte(v, 0) < 0 && utf8.ValidString(v) {
				d = append(d, bson.E{Key: fValue + "." + k, Value: v})
			}
		case bool:
			d = append(d, bson.E{Key: fValue + "." + k, Value: v})
		}
	}
	return d
}

var _ engine.FilterTx = (*tx)(nil)
