package rotate

import (
	"context"
	"errors"
	"fmt"

	"github.com/memvault/memvault/checkpointer"
)

// Sealer reseals one stored value; serde.Encrypted implements it.
type Sealer interface {
	Reencrypt(typ string, data, aad []byte) (string, []byte, bool, error)
}

// ErrNotEncrypted is returned when the backend's serializer cannot
// re-encrypt (encryption is off).
var ErrNotEncrypted = errors.New("reencrypt: the serializer does not encrypt")

// Row is one stored value: its primary key (in the order the backend's
// keyset query compares it), type tag, payload and associated data.
type Row struct {
	Key  []any
	Typ  string
	Data []byte
	AAD  []byte
}

// Change is a row to rewrite: the old value (for a compare-and-swap update
// that leaves rows written meanwhile alone) and the new one.
type Change struct {
	Row
	NewTyp  string
	NewData []byte
}

// Table is one table of value rows.
type Table struct {
	// Name is used in error messages.
	Name string
	// Count returns how many rows Fetch will visit (for progress).
	Count func(ctx context.Context) (int64, error)
	// Fetch returns up to limit rows whose key sorts after after (nil: from
	// the start), in key order.
	Fetch func(ctx context.Context, after []any, limit int) ([]Row, error)
	// Update writes the changes in one transaction.
	Update func(ctx context.Context, changes []Change) error
}

// Run reseals every value of tables with s.
func Run(ctx context.Context, s Sealer, opt checkpointer.ReencryptOptions, tables ...Table) (checkpointer.ReencryptStats, error) {
	var stats checkpointer.ReencryptStats
	batch := opt.BatchSize
	if batch <= 0 {
		batch = 500
	}
	var total int64
	for _, t := range tables {
		n, err := t.Count(ctx)
		if err != nil {
			return stats, fmt.Errorf("reencrypt %s: %w", t.Name, err)
		}
		total += n
	}
	for _, t := range tables {
		var after []any
		for {
			rows, err := t.Fetch(ctx, after, batch)
			if err != nil {
				return stats, fmt.Errorf("reencrypt %s: %w", t.Name, err)
			}
			if len(rows) == 0 {
				break
			}
			var changes []Change
			for _, r := range rows {
				nt, nd, changed, err := s.Reencrypt(r.Typ, r.Data, r.AAD)
				if err != nil {
					return stats, fmt.Errorf("reencrypt %s row %v: %w", t.Name, r.Key, err)
				}
				if changed {
					changes = append(changes, Change{Row: r, NewTyp: nt, NewData: nd})
				}
			}
			if len(changes) > 0 && !opt.DryRun {
				if err := t.Update(ctx, changes); err != nil {
					return stats, fmt.Errorf("reencrypt %s: %w", t.Name, err)
				}
			}
			stats.Scanned += int64(len(rows))
			stats.Rewritten += int64(len(changes))
			if opt.Progress != nil {
				opt.Progress(stats.Scanned, max(total, stats.Scanned))
			}
			after = rows[len(rows)-1].Key
			if len(rows) < batch {
				break
			}
		}
	}
	return stats, nil
}
