package mongostore

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/memvault/memvault/store"
)

// ttlIndexName names the TTL index on items' memvault_expires_at.
const ttlIndexName = "memvault_expires_at_ttl"

// TTLIndexStatus says whether the server deletes expired items by itself
// (Options.TTLIndex).
type TTLIndexStatus struct {
	// Requested: Options.TTLIndex was set (with Options.TTL).
	Requested bool
	// Present: the items collection has the TTL index on
	// memvault_expires_at; the server then deletes expired items
	// even while no memvault process runs.
	Present bool
	// Reason says why a requested index is absent: the server's
	// refusal (FerretDB v1: "Index option "expireAfterSeconds" is not
	// implemented yet"). The sweeper is then the only deleter.
	Reason string
}

// TTLIndex reports whether the store's items have a TTL index (see
// Options.TTLIndex).
func (s *Store) TTLIndex() TTLIndexStatus { return s.d.ttlStatus }

// setupTTLIndex creates the TTL index on items (expireAfterSeconds 0 on
// memvault_expires_at) when the server accepts one. A server that refuses
// the option (a command error: FerretDB v1 answers NotImplemented) leaves
// the store without it, the reason in ttlStatus and in a warning on
// slog's default logger; any other failure (the server unreachable) is
// New's error.
func (d *driver) setupTTLIndex(ctx context.Context) error {
	d.ttlStatus.Requested = true
	specs, err := d.items.Indexes().ListSpecifications(ctx)
	if err != nil {
		return fmt.Errorf("%s indexes: %w", d.items.Name(), err)
	}
	for _, sp := range specs {
		if sp.Name == ttlIndexName && sp.ExpireAfterSeconds != nil {
			d.ttlStatus.Present, d.ttlIndexed = true, true
			return nil
		}
	}
	_, err = d.items.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: fMVExpiresAt, Value: 1}},
		Options: options.Index().SetName(ttlIndexName).SetExpireAfterSeconds(0)})
	var ce mongo.CommandError
	switch {
	case err == nil:
		d.ttlStatus.Present, d.ttlIndexed = true, true
		return nil
	case errors.As(err, &ce):
		d.ttlStatus.Reason = fmt.Sprintf("the server refused a TTL index: %s", strings.TrimSpace(ce.Message))
		slog.Warn("mongodb: no TTL index on the store's items: memvault's sweeper alone deletes expired items",
			"collection", d.items.Name(), "reason", d.ttlStatus.Reason)
		return nil
	default:
		return fmt.Errorf("%s TTL index: %w", d.items.Name(), err)
	}
}

// orphans deletes nothing: it returns the keys of vectors, among those
// that expired when written, whose item is gone — deleted by the server's
// TTL index, which deletes one document at a time and never the vectors
// (another collection) — and, of those, the keys whose vectors have codes
// (the coverage counts them). The sweep then deletes their vectors and
// logs them for the code index. An item refreshed since its vectors were
// written still has its document, and keeps them.
func (d *driver) orphans(ctx context.Context, now time.Time) (keys, coded []store.RowKey, err error) {
	cur, err := d.vecs.Find(ctx, bson.D{{Key: fMVExpires, Value: bson.D{{Key: "$lt", Value: now.UnixNano()}}}},
		options.Find().SetProjection(bson.D{{Key: fNSStr, Value: 1}, {Key: fKey, Value: 1}, {Key: fCode, Value: 1}}))
	if err != nil {
		return nil, nil, err
	}
	withCode := map[store.RowKey]bool{}
	var cand []store.RowKey
	for cur.Next(ctx) {
		var doc codeDoc
		if err := cur.Decode(&doc); err != nil {
			cur.Close(ctx)
			return nil, nil, err
		}
		k := store.RowKey{NS: strings.ReplaceAll(doc.NSStr, sep, "."), Key: doc.Key}
		if _, seen := withCode[k]; !seen {
			cand = append(cand, k)
		}
		withCode[k] = withCode[k] || doc.Code != nil
	}
	err = cur.Err()
	cur.Close(ctx)
	if err != nil || len(cand) == 0 {
		return nil, nil, err
	}
	live := map[store.RowKey]bool{}
	if err := (&tx{d: d}).forKeys(ctx, cand, func(k store.RowKey) { live[k] = true }); err != nil {
		return nil, nil, err
	}
	for _, k := range cand {
		if !live[k] {
			keys = append(keys, k)
			if withCode[k] {
				coded = append(coded, k)
			}
		}
	}
	return keys, coded, nil
}

// forKeys calls fn with the key of every item document among keys.
func (t *tx) forKeys(ctx context.Context, keys []store.RowKey, fn func(store.RowKey)) error {
	for start := 0; start < len(keys); start += 200 {
		f, n := keysCond(keys[start:min(len(keys), start+200)])
		if n == 0 {
			continue
		}
		if err := t.forIndexed(ctx, f, fn); err != nil {
			return err
		}
	}
	return nil
}
