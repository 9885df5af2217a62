package sqlite

import (
	"context"
	"database/sql"
)

// coverage summarises a set of items cheaply enough to keep beside it: how
// many there are and the sum, wrapping, of a 64-bit hash of each one's
// (namespace, key). It is independent of order, and an item added then
// removed leaves no trace, so that it can be kept up to date one item at
// a time on both sides of a comparison.
//
// store_vector_quant holds the coverage of the items that have code rows
// (code_items, code_sum), kept by every transaction that writes or deletes
// codes, in that transaction; the index keeps the coverage of the items it
// holds. A search compares the two for the generation it reads (the row is
// read with the generation, at no extra query), so that an index built
// from a snapshot or a log that does not cover the store (snapshot rows
// deleted or rewritten, log rows deleted: by an operator, a tool, a
// restored backup) is dropped and rebuilt from the code rows instead of
// answering without some items, or with items the store no longer holds.
// It does not see a code replaced in place (same item) without its log
// row: that code's estimate is stale, its exact score is not.
type coverage struct {
	items int64
	sum   uint64
}

func (c *coverage) add(h uint64) { c.items++; c.sum += h }
func (c *coverage) sub(h uint64) { c.items--; c.sum -= h }

// plus and minus are c + o and c - o, item by item.
func (c coverage) plus(o coverage) coverage  { return coverage{c.items + o.items, c.sum + o.sum} }
func (c coverage) minus(o coverage) coverage { return coverage{c.items - o.items, c.sum - o.sum} }

// The item hash is FNV-1a over the namespace, then its length, then the
// key, finished by splitmix64's mixer so that sums of similar keys do not
// cancel out. It is part of the file format (code_sum): never change it
// without a migration that recomputes the column.
const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

// nsHash is the hash state after namespace ns, shared by its items.
func nsHash(ns string) uint64 {
	h := uint64(fnvOffset)
	for i := 0; i < len(ns); i++ {
		h = (h ^ uint64(ns[i])) * fnvPrime
	}
	return (h ^ uint64(len(ns))) * fnvPrime
}

// keyHash is the item hash of key under the namespace state nh.
func keyHash[K string | []byte](nh uint64, key K) uint64 {
	h := nh
	for i := 0; i < len(key); i++ {
		h = (h ^ uint64(key[i])) * fnvPrime
	}
	h ^= h >> 30
	h *= 0xbf58476d1ce4e5b9
	h ^= h >> 27
	h *= 0x94d049bb133111eb
	return h ^ h>>31
}

// itemHash is the item hash of (ns, key).
func itemHash(k itemKey) uint64 { return keyHash(nsHash(k.ns), k.key) }

// storedCoverage is store_vector_quant's coverage as read; known is false
// until Open has computed it (a database from before the column).
type storedCoverage struct {
	cov   coverage
	known bool
}

func (s *storedCoverage) scan(items, sum sql.NullInt64) {
	s.known = items.Valid && sum.Valid
	s.cov = coverage{items.Int64, uint64(sum.Int64)}
}

// args are the columns' values to write.
func (s storedCoverage) args() (items, sum any) {
	if !s.known {
		return nil, nil
	}
	return s.cov.items, int64(s.cov.sum)
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
		nh      = nsHash("")
	)
	for rs.Next() {
		if err := rs.Scan(&ns, &key); err != nil {
			return c, err
		}
		if string(ns) != lastNS {
			lastNS = string(ns)
			nh = nsHash(lastNS)
		}
		c.add(keyHash(nh, []byte(key)))
	}
	return c, rs.Err()
}
