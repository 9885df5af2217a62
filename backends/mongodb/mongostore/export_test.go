package mongostore

import "testing"

// NoFloatCopy turns the exact in-process float copy off for the rest of
// the test, so that searches rank by the code index.
func NoFloatCopy(t testing.TB) {
	old := floatBudget
	floatBudget = 0
	t.Cleanup(func() { floatBudget = old })
}
