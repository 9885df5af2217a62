package items

import (
	"context"
	"fmt"

	"github.com/memvault/memvault/internal/binding"
	"github.com/memvault/memvault/internal/envelope"
	"github.com/memvault/memvault/internal/rotate"
	"github.com/memvault/memvault/internal/sqlexec"
	"github.com/memvault/memvault/reencrypt"
	"github.com/memvault/memvault/serde"
)

// ValueSQL is how a SQL database reads and writes the item table's value
// column as bytes: Read selects it, Set is the placeholder expression that
// stores new bytes, and Match the condition that the column still holds the
// bytes that were read.
type ValueSQL struct {
	Read, Set, Match string
}

// ReencryptSQL is Reencrypt for the SQL drivers: every item value of the
// table (as db names it) that is not sealed under the serializer's primary
// key — or is still plaintext JSON, when the serializer reads plaintext —
// becomes an envelope sealed under it, bound to the item's namespace and
// key. Rows are read in key order a batch at a time and written back with
// compare-and-swap updates in one transaction per batch, so concurrent
// writes win and an interrupted run can be started again. Vectors,
// timestamps and TTLs are untouched. Then the file is compacted where it
// keeps old row images (rotate.Compact).
func (b *Base) ReencryptSQL(ctx context.Context, db sqlexec.DB, s serde.Serializer, opt reencrypt.Options, table string, v ValueSQL) (reencrypt.Stats, error) {
	if err := b.Check(ctx); err != nil {
		return reencrypt.Stats{}, err
	}
	c := b.Config
	codec := binding.New(s)
	if !codec.CanReencrypt() {
		return reencrypt.Stats{}, fmt.Errorf("%s: %w", c.Driver, rotate.ErrNotEncrypted)
	}
	items := rotate.SQLTable{
		Name: table, Label: "store",
		Keys:    []string{"prefix", "key"},
		Start:   []any{"", ""},
		Columns: "prefix, key, " + v.Read,
		Scan: func(scan func(...any) error) (rotate.Row, error) {
			var prefix, key string
			var raw []byte
			if err := scan(&prefix, &key, &raw); err != nil {
				return rotate.Row{}, err
			}
			// The compare-and-swap needs the column as stored.
			row := codec.Row([]any{prefix, key, raw}, binding.Item{Namespace: prefix, Key: key}, serde.TypeJSON, raw)
			tag, data, ok, err := envelope.Parse(raw)
			if err != nil {
				return row, fmt.Errorf("%s/%s: %w", prefix, key, err)
			}
			if ok {
				row.Typ, row.Data = tag, data
			}
			return row, nil
		},
		Update: func(ch rotate.Change) sqlexec.Stmt {
			return sqlexec.Stmt{
				SQL:  `UPDATE ` + table + ` SET value = ` + v.Set + ` WHERE prefix = ? AND key = ? AND ` + v.Match,
				Args: []any{envelope.Encode(ch.NewTyp, ch.NewData), ch.Key[0], ch.Key[1], ch.Key[2]},
			}
		},
	}
	st, err := rotate.Run(ctx, codec, opt, items.Table(db))
	if err == nil {
		err = rotate.Compact(ctx, opt, db)
	}
	if err != nil {
		return st, fmt.Errorf("%s: %w", c.Driver, err)
	}
	return st, nil
}
