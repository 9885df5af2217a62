package mongostore

import (
	"context"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/memvault/memvault/internal/binding"
	"github.com/memvault/memvault/internal/envelope"
	"github.com/memvault/memvault/internal/rotate"
	"github.com/memvault/memvault/reencrypt"
	"github.com/memvault/memvault/serde"
	"github.com/memvault/memvault/store"
)

// Reencrypt implements store.Reencrypter: every item value not sealed
// under the serializer's primary key (or still plaintext, when the
// serializer reads plaintext) is sealed again into memvault_value, bound
// to its namespace and key, a batch at a time in (namespace_str, key)
// order. Each write is a compare-and-swap on the document as read (its
// memvault_value, or for a plaintext "value" its timestamps), so a put
// meanwhile wins; passes repeat until one after the first finds nothing
// (rotate.Run). Vectors, timestamps and TTLs are untouched. MongoDB keeps
// no row images a compaction would have to remove.
func (s *Store) Reencrypt(ctx context.Context, opt reencrypt.Options) (reencrypt.Stats, error) {
	codec := binding.New(s.serde)
	if s.serde == nil || !codec.CanReencrypt() {
		return reencrypt.Stats{}, fmt.Errorf("mongodb: %w", rotate.ErrNotEncrypted)
	}
	items := s.d.items
	t := rotate.Table{
		Name: "store",
		Count: func(ctx context.Context) (int64, error) {
			return items.CountDocuments(ctx, bson.D{})
		},
		Fetch: func(ctx context.Context, after []any, limit int) ([]rotate.Row, error) {
			f := bson.D{}
			if after != nil {
				ns, key := after[0].(string), after[1].(string)
				f = bson.D{{Key: "$or", Value: bson.A{
					bson.D{{Key: fNSStr, Value: bson.D{{Key: "$gt", Value: ns}}}},
					bson.D{{Key: fNSStr, Value: ns}, {Key: fKey, Value: bson.D{{Key: "$gt", Value: key}}}},
				}}}
			}
			cur, err := items.Find(ctx, f, options.Find().SetSort(bson.D{{Key: fNSStr, Value: 1}, {Key: fKey, Value: 1}}).SetLimit(int64(limit)))
			if err != nil {
				return nil, err
			}
			defer cur.Close(ctx)
			var out []rotate.Row
			for cur.Next(ctx) {
				var doc itemDoc
				if err := cur.Decode(&doc); err != nil {
					return nil, err
				}
				r, err := doc.row()
				if err != nil {
					return nil, err
				}
				// The compare-and-swap condition: the bytes as read, or a
				// plaintext document's versions.
				cas := bson.D{{Key: fNSStr, Value: doc.NSStr}, {Key: fKey, Value: doc.Key}}
				if doc.Value == nil {
					cas = append(cas, bson.E{Key: fMVValue, Value: bson.Binary{Data: doc.MVValue}})
				} else {
					cas = append(cas, bson.E{Key: fUpdatedAt, Value: doc.UpdatedAt},
						bson.E{Key: fMVUpdated, Value: doc.Updated})
				}
				row := codec.Row([]any{doc.NSStr, doc.Key, cas}, binding.Item{Namespace: r.NS, Key: r.Key}, serde.TypeJSON, r.Value)
				tag, data, ok, err := envelope.Parse(r.Value)
				if err != nil {
					return nil, fmt.Errorf("%s/%s: %w", r.NS, r.Key, err)
				}
				if ok {
					row.Typ, row.Data = tag, data
				}
				out = append(out, row)
			}
			return out, cur.Err()
		},
		Update: func(ctx context.Context, changes []rotate.Change) error {
			models := make([]mongo.WriteModel, len(changes))
			for i, ch := range changes {
				models[i] = mongo.NewUpdateOneModel().SetFilter(ch.Key[2]).SetUpdate(bson.D{
					{Key: "$set", Value: bson.D{{Key: fMVValue, Value: bson.Binary{Data: envelope.Encode(ch.NewTyp, ch.NewData)}}}},
					{Key: "$unset", Value: bson.D{{Key: fValue, Value: ""}}},
				})
			}
			_, err := items.BulkWrite(ctx, models, options.BulkWrite().SetOrdered(false))
			return err
		},
	}
	st, err := rotate.Run(ctx, codec, opt, t)
	if err != nil {
		return st, fmt.Errorf("mongodb: %w", err)
	}
	return st, nil
}

var _ store.Reencrypter = (*Store)(nil)
