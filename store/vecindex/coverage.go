package vecindex

// Coverage summarises a set of items cheaply enough to keep beside it: how
// many there are and the sum, wrapping, of a 64-bit hash of each one's
// (namespace, key). It is independent of order, and an item added then
// removed leaves no trace, so that it can be kept up to date one item at
// a time on both sides of a comparison.
//
// The storage keeps the coverage of the items that have codes, in the
// transaction that writes or deletes them (State.Stored); the index keeps
// the coverage of the items it holds. A search compares the two for the
// generation it reads, so that an index built from a snapshot or a log
// that does not cover the store (snapshot rows deleted or rewritten, log
// rows deleted: by an operator, a tool, a restored backup) is dropped and
// rebuilt from the code rows instead of answering without some items, or
// with items the store no longer holds. It does not see a code replaced
// in place (same item) without its log row: that code's estimate is
// stale, its exact score is not.
type Coverage struct {
	Items int64
	Sum   uint64
}

// Add counts an item of hash h in.
func (c *Coverage) Add(h uint64) { c.Items++; c.Sum += h }

// Sub counts an item of hash h out.
func (c *Coverage) Sub(h uint64) { c.Items--; c.Sum -= h }

// Plus is c + o, item by item.
func (c Coverage) Plus(o Coverage) Coverage { return Coverage{c.Items + o.Items, c.Sum + o.Sum} }

// Minus is c - o, item by item.
func (c Coverage) Minus(o Coverage) Coverage { return Coverage{c.Items - o.Items, c.Sum - o.Sum} }

// The item hash is FNV-1a over the namespace, then its length, then the
// key, finished by splitmix64's mixer so that sums of similar keys do not
// cancel out. It is part of the file format (store/sqlitestore's code_sum):
// never change it without a migration that recomputes the column.
const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

// NSHash is the hash state after namespace ns, shared by its items.
func NSHash(ns string) uint64 {
	h := uint64(fnvOffset)
	for i := 0; i < len(ns); i++ {
		h = (h ^ uint64(ns[i])) * fnvPrime
	}
	return (h ^ uint64(len(ns))) * fnvPrime
}

// KeyHash is the item hash of key under the namespace state nh.
func KeyHash[K string | []byte](nh uint64, key K) uint64 {
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

// ItemHash is the item hash of k.
func ItemHash(k Key) uint64 { return KeyHash(NSHash(k.NS), k.Key) }

// StoredCoverage is the storage's coverage of the items with codes as
// read; Known is false when the storage has none yet (a database from
// before it was kept): nothing can then be compared with it.
type StoredCoverage struct {
	Cov   Coverage
	Known bool
}
