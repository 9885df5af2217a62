package mongostore

import "testing"

// NoFloatCopy turns the exact in-process float copy off for the rest of
// the test, so that searches rank by the code index.
func NoFloatCopy(t testing.TB) {
	old := floatBudget
	floatBudget = 0
	t.Cleanup(func() { floatBudget = old })
}

// SetBeforeWrite makes s's write transactions run f at Commit, after the
// engine checked the keys that sealed their values and Commit read the
// items they replace, before they write: the tests widen that window to
// race an erasure or another writer into it.
func SetBeforeWrite(s *Store, f func()) { s.d.beforeWrite = f }

// AssumeTTLIndex makes s write and sweep as on a server that has the TTL
// index (FerretDB refuses it): the tests then delete an item's document
// as the server's TTL monitor would.
func AssumeTTLIndex(s *Store) { s.d.ttlIndexed = true }

// SetAfterWrite makes s's write transactions run f at Commit just after
// they wrote, before they check the erasure guard again: the tests stop a
// write there.
func SetAfterWrite(s *Store, f func()) { s.d.afterWrite = f }
