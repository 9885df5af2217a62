package rotate_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/memvault/memvault/internal/rotate"
	"github.com/memvault/memvault/reencrypt"
)

// upper "reseals" lower-case values by upper-casing them, and fails on "bad".
type upper struct{}

func (upper) Reencrypt(_ context.Context, r rotate.Row) (string, []byte, bool, error) {
	typ, data := r.Typ, r.Data
	if string(data) == "bad" {
		return "", nil, false, errors.New("cannot open")
	}
	if u := strings.ToUpper(string(data)); u != string(data) {
		return typ, []byte(u), true, nil
	}
	return typ, data, false, nil
}

// table is an in-memory table of values keyed by an int.
func table(values []string, updates *int) rotate.Table {
	return rotate.Table{
		Name:  "t",
		Count: func(context.Context) (int64, error) { return int64(len(values)), nil },
		Fetch: func(_ context.Context, after []any, limit int) ([]rotate.Row, error) {
			start := 0
			if after != nil {
				start = after[0].(int) + 1
			}
			var rows []rotate.Row
			for i := start; i < len(values) && len(rows) < limit; i++ {
				rows = append(rows, rotate.Row{Key: []any{i}, Typ: "json", Data: []byte(values[i])})
			}
			return rows, nil
		},
		Update: func(_ context.Context, cs []rotate.Change) error {
			*updates++
			for _, c := range cs {
				i := c.Key[0].(int)
				if values[i] != string(c.Data) {
					continue // compare-and-swap: changed meanwhile
				}
				values[i] = string(c.NewData)
			}
			return nil
		},
	}
}

func TestRun(t *testing.T) {
	values := []string{"a", "B", "c", "D", "e", "f", "G"}
	var updates int
	var progress [][2]int64
	opt := reencrypt.Options{BatchSize: 3, Progress: func(d, n int64) { progress = append(progress, [2]int64{d, n}) }}

	dry := opt
	dry.DryRun = true
	st, err := rotate.Run(context.Background(), upper{}, dry, table(values, &updates))
	if err != nil || st.Scanned != 7 || st.Rewritten != 4 || updates != 0 || values[0] != "a" {
		t.Fatalf("dry run: %+v %v, %d updates, values %v", st, err, updates, values)
	}
	progress = nil
	st, err = rotate.Run(context.Background(), upper{}, opt, table(values, &updates))
	if err != nil || st.Scanned != 7 || st.Rewritten != 4 {
		t.Fatalf("run: %+v %v", st, err)
	}
	if !slices.Equal(values, []string{"A", "B", "C", "D", "E", "F", "G"}) || updates != 2 {
		t.Fatalf("values %v after %d updates", values, updates)
	}
	if fmt.Sprint(progress) != "[[3 7] [6 7] [7 7] [10 14] [13 14] [14 14]]" { // the second pass verifies
		t.Fatalf("progress = %v", progress)
	}
	st, err = rotate.Run(context.Background(), upper{}, opt, table(values, &updates))
	if err != nil || st.Rewritten != 0 || updates != 2 {
		t.Fatalf("second run: %+v %v, %d updates", st, err, updates)
	}
}

func TestRunStopsOnUndecryptableRow(t *testing.T) {
	values := []string{"a", "bad", "c"}
	var updates int
	_, err := rotate.Run(context.Background(), upper{}, reencrypt.Options{BatchSize: 10}, table(values, &updates))
	if err == nil || !strings.Contains(err.Error(), "row [1]") || updates != 0 {
		t.Fatalf("err = %v, updates %d; want the failing row named and nothing written", err, updates)
	}
}

func ExampleRun() {
	values := []string{"a", "B", "c"}
	var updates int
	st, err := rotate.Run(context.Background(), upper{}, reencrypt.Options{}, table(values, &updates))
	fmt.Println(st.Scanned, st.Rewritten, values, err)
	// Output: 3 2 [A B C] <nil>
}
