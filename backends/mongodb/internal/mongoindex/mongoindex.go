package mongoindex

import (
	"context"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
)

// HasIndexOn reports whether coll has an index whose key is keys, under
// any name: Python's, JS's or one made by hand serves the same queries,
// so Setup does not make a second one.
func HasIndexOn(ctx context.Context, coll *mongo.Collection, keys bson.D) (bool, error) {
	cur, err := coll.Indexes().List(ctx)
	if err != nil {
		return false, err
	}
	var idx []struct {
		Key bson.D `bson:"key"`
	}
	if err := cur.All(ctx, &idx); err != nil {
		return false, err
	}
	for _, ix := range idx {
		if sameKey(ix.Key, keys) {
			return true, nil
		}
	}
	return false, nil
}

// sameKey reports whether two index keys name the same fields in the same
// order and directions (1 and int32(1) alike).
func sameKey(a, b bson.D) bool {
	if len(a) != len(b) {
		return false
	}
	for i, e := range a {
		if e.Key != b[i].Key || fmt.Sprint(e.Value) != fmt.Sprint(b[i].Value) {
			return false
		}
	}
	return true
}
