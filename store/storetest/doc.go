// Package storetest is the conformance suite every store.Store backend
// runs in full:
//
//	func TestConformance(t *testing.T) {
//		storetest.Run(t, func(t *testing.T, cfg storetest.Config) store.Store {
//			s, err := mybackend.Open(ctx, ..., cfg.Index, cfg.TTL, cfg.Now)
//			if err != nil {
//				t.Fatal(err)
//			}
//			return s
//		})
//	}
//
// The suite asks for stores with and without an index and a TTL
// configuration and passes a fake Clock in Config.Now, which it advances
// itself, so TTL tests never sleep. A backend must therefore take every
// timestamp from Config.Now: created_at, updated_at and expires_at (SQL
// backends compute them in Go and send them as parameters instead of
// using NOW()), and the "current time" of omit-expired reads and sweeps.
// Each call of the constructor must return an empty store, isolated from
// the others (a fresh schema or database file). When the store implements
// io.Closer the suite closes it at the end of the subtest; when it
// implements store.Sweeper the suite checks Sweep too.
//
// The semantics the suite pins down, where LangGraph's backends disagree
// with each other or are buggy:
//
//   - A search without query orders by updated_at descending, then by the
//     namespace's dotted form and the key (byte order).
//   - A search with a query returns the items that have vectors first, by
//     score descending (each item scored by its best field), then the items
//     without vectors in the no-query order; offset and limit apply to that
//     combined list. Pages are stable: concatenated pages equal the full
//     list, without duplicates.
//   - Re-putting an item replaces all its vectors: fields no longer present
//     and puts WithoutIndex leave no stale vectors.
//   - Filters compare numbers as numbers and strings as strings; other
//     kind pairs and missing fields never match (not even $ne).
//   - list_namespaces sorts by the dotted form in byte order.
//   - Negative limits and offsets fail with store.ErrInvalidArgument, bad
//     filters with store.ErrInvalidFilter, bad namespaces and keys with
//     store.ErrInvalidNamespace / store.ErrInvalidKey (on every operation,
//     not only puts); a namespace (labels joined with '.'), key or index
//     field path one byte over store.MaxIDBytes in a write (Put, PutIf, a
//     Batch's put op, WithIndex) with store.ErrIDTooLong too, storing
//     nothing, while reads, listings, searches and deletes accept it and
//     find nothing, and all three at the limit (incompressible multi-byte
//     text) are stored and read back; a TTL on a store without TTLConfig with
//     store.ErrNoTTL, WithIndex on a store without index with
//     store.ErrNoIndex.
//   - Item.ExpiresAt reports the expiry; TTLs refresh by
//     items.RefreshTTL(items.TTLMinutes(ttl)).
//   - Values round-trip as JSON, including NUL characters in strings,
//     non-ASCII text and values of several MiB, and (Fidelity) come back
//     from Get, Search and Batch with exactly the Go types and values of
//     memvault's JSON value model (package jsonvalue) for every case of
//     jsonvalue/jsonvaluetest, compared strictly; NaN, infinities and
//     invalid UTF-8 fail with store.ErrInvalidArgument and change nothing.
package storetest
