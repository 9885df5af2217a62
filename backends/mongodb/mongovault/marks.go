package mongovault

import (
	"context"
	"fmt"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// MarksBetween returns the marks whose names sort strictly between after
// and below (byte order), in that order, at most limit of them: the marks
// of a kind that vault numbers with a fixed width (erasure intents).
func (m auditMeta) MarksBetween(ctx context.Context, after, below string, limit int) ([][2]string, error) {
	cur, err := m.coll.Find(ctx, bson.D{{Key: "_id", Value: bson.D{{Key: "$gt", Value: markPrefix + after}, {Key: "$lt", Value: markPrefix + below}}}},
		options.Find().SetSort(bson.D{{Key: "_id", Value: 1}}).SetLimit(int64(limit)).SetProjection(bson.D{{Key: "value", Value: 1}}))
	if err != nil {
		return nil, fmt.Errorf("mongovault: marks: %w", err)
	}
	var docs []struct {
		ID    string        `bson:"_id"`
		Value bson.RawValue `bson:"value"` // not a string: an invalid mark, not a failed read
	}
	if err := cur.All(ctx, &docs); err != nil {
		return nil, fmt.Errorf("mongovault: marks: %w", err)
	}
	out := make([][2]string, 0, len(docs))
	for _, d := range docs {
		v, _ := d.Value.StringValueOK()
		out = append(out, [2]string{strings.TrimPrefix(d.ID, markPrefix), v})
	}
	return out, nil
}
