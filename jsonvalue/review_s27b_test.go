package jsonvalue_test

import (
	"math"
	"testing"

	"github.com/memvault/memvault/jsonvalue"
)

// TestReviewS27bMarshalOneZero: Marshal says it maps v onto the model
// (Canonical) first, and the model has one zero (de4e2b9); yet a float64
// -0.0 leaf was written as "-0.0". Checkpoint metadata is written by
// Marshal (core.EncodeMetadata) and never canonicalized before, so SQLite,
// Redis and the memory saver stored "-0.0" while PostgreSQL's jsonb stored
// 0: the stored form differs by backend (a Python reader of the SQLite
// file sees -0.0).
// Before the fix: Marshal(-0.0) = "-0.0", want "0.0".
func TestReviewS27bMarshalOneZero(t *testing.T) {
	neg := math.Copysign(0, -1)
	for _, c := range []struct {
		in   any
		want string
	}{
		{neg, "0.0"},
		{map[string]any{"x": neg}, `{"x":0.0}`},
		{[]any{neg}, `[0.0]`},
	} {
		b, err := jsonvalue.Marshal(c.in)
		if err != nil {
			t.Fatal(err)
		}
		if string(b) != c.want {
			t.Errorf("Marshal(%#v) = %s, want %s (Canonical gives 0.0)", c.in, b, c.want)
		}
	}
}
