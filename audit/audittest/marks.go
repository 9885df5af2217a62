package audittest

import (
	"context"
	"fmt"
	"slices"
	"testing"
)

// BetweenMarks are the marks of a data database that list a range of
// names (vault's erasure intents): SQLite's, PostgreSQL's and MongoDB's.
type BetweenMarks interface {
	Mark(ctx context.Context, name, value string) error
	MarksBetween(ctx context.Context, after, below string, limit int) ([][2]string, error)
}

// RunMarksBetween checks MarksBetween on m, a fresh database's marks: the
// names strictly between the bounds, in byte order (fixed-width numbers in
// number order, whatever the database's collation), at most limit, and
// nothing of a database that holds no mark yet.
func RunMarksBetween(t *testing.T, m BetweenMarks) {
	ctx := t.Context()
	if got, err := m.MarksBetween(ctx, "x_", "x_:", 10); err != nil || len(got) != 0 {
		t.Fatalf("MarksBetween of a database without marks = %v, %v", got, err)
	}
	for _, n := range []int{10, 2, 1, 30, 3} {
		if err := m.Mark(ctx, fmt.Sprintf("x_%05d", n), fmt.Sprint("v", n)); err != nil {
			t.Fatal(err)
		}
	}
	for _, other := range []string{"x_", "x_:", "x_A", "w_00001", "y_00001", "x-00001"} {
		if err := m.Mark(ctx, other, "out"); err != nil {
			t.Fatal(err)
		}
	}
	got, err := m.MarksBetween(ctx, "x_", "x_:", 10)
	if err != nil {
		t.Fatal(err)
	}
	want := [][2]string{{"x_00001", "v1"}, {"x_00002", "v2"}, {"x_00003", "v3"}, {"x_00010", "v10"}, {"x_00030", "v30"}}
	if !slices.Equal(got, want) {
		t.Fatalf("MarksBetween(x_, x_:) = %v, want %v", got, want)
	}
	if got, err := m.MarksBetween(ctx, "x_00002", "x_:", 2); err != nil || !slices.Equal(got, want[2:4]) {
		t.Fatalf("MarksBetween(x_00002, x_:, 2) = %v, %v; want %v", got, err, want[2:4])
	}
}
