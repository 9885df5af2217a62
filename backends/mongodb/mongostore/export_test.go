package mongostore

import "testing"

// NoFloatCopy turns the exact in-process float copy off for the rest of
// the test, so that searches rank by the code index.
func NoFloatCopy(t testing.TB) {
	old := floatBudget
	floatBudget = 0
	t.Cleanup(func() { floatBudget = old })
}

// SetBeforeCommit makes s's write transactions run f at Commit, after the
// engine checked the keys that sealed their values and before they write:
// the erasure test widens that window to race an erasure into it.
func SetBeforeCommit(s *Store, f func()) { s.d.beforeCommit = f }
