package engine

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/memvault/memvault/internal/binding"
	"github.com/memvault/memvault/internal/envelope"
	"github.com/memvault/memvault/internal/rotate"
	"github.com/memvault/memvault/reencrypt"
	"github.com/memvault/memvault/serde"
	"github.com/memvault/memvault/store"
)

// Reencrypt is store.Reencrypter over e's driver alone, for a driver
// outside this module (Redis), which cannot reach the SQL path the SQLite
// and PostgreSQL stores take: every item value not sealed under the
// serializer's primary key (or still plaintext, when the serializer reads
// plaintext) is sealed again, bound to its namespace and key, a batch per
// write transaction. Items are visited namespace by namespace in key order
// (DriverTx.Namespaces and DriverTx.Page at the zero time, so expired
// items are resealed too); each is rewritten only when its value column
// still holds the bytes read (a write meanwhile wins), with its
// timestamps, expiry and vectors unchanged. Safe to run again after an
// interruption. A function, not a method, so that it does not become one
// of the stores that embed an Engine.
func Reencrypt(ctx context.Context, e *Engine, opt reencrypt.Options) (reencrypt.Stats, error) {
	if err := e.b.Check(ctx); err != nil {
		return reencrypt.Stats{}, err
	}
	codec := e.vals.codec
	if e.vals.serde == nil || !codec.CanReencrypt() {
		return reencrypt.Stats{}, fmt.Errorf("%s: %w", e.b.Driver, rotate.ErrNotEncrypted)
	}
	var all time.Time // the zero time: no row is expired at it
	view := func(ctx context.Context, fn func(tx store.DriverTx) error) error {
		tx, err := e.begin(ctx, false)
		if err != nil {
			return err
		}
		return end(tx, fn(tx))
	}
	namespaces := func(ctx context.Context, tx store.DriverTx) ([]string, error) {
		nss, err := tx.Namespaces(ctx, nil, all)
		if err != nil {
			return nil, err
		}
		out := make([]string, len(nss))
		for i, ns := range nss {
			out[i] = ns.String()
		}
		slices.Sort(out)
		return out, nil
	}
	table := rotate.Table{
		Name: "store",
		Count: func(ctx context.Context) (n int64, err error) {
			err = view(ctx, func(tx store.DriverTx) error {
				nss, err := namespaces(ctx, tx)
				for _, ns := range nss {
					for after := ""; err == nil; {
						var rs []store.Row
						if rs, err = tx.Page(ctx, ns, after, 1000, all); err != nil || len(rs) == 0 {
							break
						}
						n += int64(len(rs))
						after = rs[len(rs)-1].Key
					}
				}
				return err
			})
			return n, err
		},
		Fetch: func(ctx context.Context, after []any, limit int) (out []rotate.Row, err error) {
			var afterNS, afterKey string
			if after != nil {
				afterNS, afterKey = after[0].(string), after[1].(string)
			}
			err = view(ctx, func(tx store.DriverTx) error {
				nss, err := namespaces(ctx, tx)
				if err != nil {
					return err
				}
				for _, ns := range nss {
					if ns < afterNS || len(out) >= limit {
						continue
					}
					from := ""
					if ns == afterNS {
						from = afterKey
					}
					rs, err := tx.Page(ctx, ns, from, limit-len(out), all)
					if err != nil {
						return err
					}
					for _, r := range rs {
						row := codec.Row([]any{r.NS, r.Key, slices.Clone(r.Value)}, binding.Item{Namespace: r.NS, Key: r.Key}, serde.TypeJSON, r.Value)
						tag, data, ok, err := envelope.Parse(r.Value)
						if err != nil {
							return fmt.Errorf("%s/%s: %w", r.NS, r.Key, err)
						}
						if ok {
							row.Typ, row.Data = tag, data
						}
						out = append(out, row)
					}
				}
				return nil
			})
			return out, err
		},
		Update: func(ctx context.Context, changes []rotate.Change) error {
			return e.update(ctx, func(tx store.DriverTx) error {
				for _, ch := range changes {
					k := store.RowKey{NS: ch.Key[0].(string), Key: ch.Key[1].(string)}
					r, ok, err := tx.Get(ctx, k)
					if err != nil {
						return err
					}
					if !ok || !bytes.Equal(r.Value, ch.Key[2].([]byte)) {
						continue // deleted or rewritten meanwhile: that write wins
					}
					r.Value = envelope.Encode(ch.NewTyp, ch.NewData)
					r.Doc = nil
					if err := tx.Put(ctx, store.RowWrite{Row: r}); err != nil {
						return err
					}
				}
				return nil
			})
		},
	}
	st, err := rotate.Run(ctx, codec, opt, table)
	if err != nil {
		return st, fmt.Errorf("%s: %w", e.b.Driver, err)
	}
	return st, nil
}
