package sqlite

import (
	"context"
	"database/sql"

	"github.com/memvault/memvault/store/internal/vecindex"
)

// store_vector_quant holds the coverage (see vecindex.Coverage) of the
// items that have code rows (code_items, code_sum), kept by every
// transaction that writes or deletes codes, in that transaction; a
// search reads it with the generation, at no extra query.

type coverage = vecindex.Coverage

// itemHash is the item hash of k (part of the file format: code_sum).
func itemHash(k itemKey) uint64 { return vecindex.ItemHash(k) }

// storedCoverage is store_vector_quant's coverage as read; Known is false
// until Open has computed it (a database from before the column).
type storedCoverage = vecindex.StoredCoverage

// scanCoverage is the stored coverage of the columns' values.
func scanCoverage(items, sum sql.NullInt64) storedCoverage {
	return storedCoverage{Cov: coverage{Items: items.Int64, Sum: uint64(sum.Int64)}, Known: items.Valid && sum.Valid}
}

// args are the columns' values to write.
func coverageArgs(s storedCoverage) (items, sum any) {
	if !s.Known {
		return nil, nil
	}
	return s.Cov.Items, int64(s.Cov.Sum)
}

// codedItems computes the coverage of the items with code rows in tx by
// reading every key of store_vector_codes.
func codedItems(ctx context.Context, tx *sql.Tx) (coverage, error) {
	var c coverage
	rs, err := tx.QueryContext(ctx, `SELECT prefix, key FROM store_vector_codes GROUP BY prefix, key`)
	if err != nil {
		return c, err
	}
	defer rs.Close()
	var (
		ns, key sql.RawBytes
		lastNS  string
		nh      = vecindex.NSHash("")
	)
	for rs.Next() {
		if err := rs.Scan(&ns, &key); err != nil {
			return c, err
		}
		if string(ns) != lastNS {
			lastNS = string(ns)
			nh = vecindex.NSHash(lastNS)
		}
		c.Add(vecindex.KeyHash(nh, []byte(key)))
	}
	return c, rs.Err()
}
