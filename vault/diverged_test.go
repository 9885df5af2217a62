package vault

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// TestDivergedKeyTablesRefusalNamesBoth: a copy of the key table taken
// while no erasure had run since, used by another process, runs an
// erasure first. The live key table, on which erin was created after the
// copy, is then behind the database's count and refused — rightly, since
// it still holds carol's keys — but it is not "a copy or a backup": it
// alone holds erin's keys. The old refusal said only that, and an operator
// who followed it retired the live table and lost erin. The refusal must
// name the other possibility and what to compare before retiring either.
func TestDivergedKeyTablesRefusalNamesBoth(t *testing.T) {
	for _, tc := range []struct {
		name string
		pg   bool
	}{{"SQLite", false}, {"PostgreSQL", true}} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			live, onCopy := carolThenCopy(t, tc.pg, false, false)
			h, err := Open(ctx, live)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := putCarolS22(ctx, h, "erin:1", "erin is fine"); err != nil {
				t.Fatal(err)
			}
			h.Close()

			c, err := Open(ctx, onCopy)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := c.Forget(ctx, "carol"); err != nil {
				t.Fatalf("forget on the copy (counts equal): %v", err)
			}
			c.Close()

			_, err = Open(ctx, live)
			if !errors.Is(err, ErrSubjectsChanged) {
				t.Fatalf("Open of the live key table behind the copy's erasure: %v, want ErrSubjectsChanged", err)
			}
			for _, want := range []string{"a copy of this key table", "keys census", "exist nowhere else"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("the refusal does not say %q (an operator retires the live table and loses erin): %v", want, err)
				}
			}
			// What the refusal tells the operator to do works on the
			// refused table: the census opens it (as `keys census` does)
			// and shows erin, whose keys only it holds.
			skip := live
			skip.DangerousSkipKeyCheck = true
			hs, err := Open(ctx, skip)
			if err != nil {
				t.Fatalf("open for the census: %v", err)
			}
			defer hs.Close()
			page, err := hs.Keys.KeyPage(ctx, "", 0, 100)
			if err != nil {
				t.Fatal(err)
			}
			found := false
			for _, k := range page {
				found = found || k.Subject == "erin"
			}
			if !found {
				t.Fatalf("the census of the refused live key table does not list erin: %+v", page)
			}
		})
	}
}
