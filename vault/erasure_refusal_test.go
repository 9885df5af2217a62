package vault

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/memvault/memvault/memvaulttest/pgtest"
	"github.com/memvault/memvault/store"
)

// TestStoreWriteAfterReadmitByAnother is TestReviewS25LiveProcessAfterReadmit
// for the store: process A wrote carol's memory (her key cached), B
// forgets and readmits carol; A's store writes of carol must succeed at
// the latest on a retry — on PostgreSQL the refusal comes from SQL, and A
// must then forget what it cached of carol's keys (binding.Codec.Refused)
// instead of sealing under the destroyed key until the cache expires.
func TestStoreWriteAfterReadmitByAnother(t *testing.T) {
	for _, pg := range []bool{false, true} {
		t.Run(map[bool]string{false: "SQLite", true: "PostgreSQL"}[pg], func(t *testing.T) {
			ctx := context.Background()
			c := s23Config(t.TempDir())
			if pg {
				c.DSN = pgtest.SchemaDSN(t)
				c.KeyTable = fmt.Sprintf("keys_%d", time.Now().UnixNano())
			}
			ns := store.Namespace{"users", "carol"}
			put := func(h *Handle, key string) error {
				return h.Store.Put(ctx, ns, key, map[string]any{"note": "carol takes insulin"})
			}
			a, err := Open(ctx, c)
			if err != nil {
				t.Fatal(err)
			}
			defer a.Close()
			if err := put(a, "m1"); err != nil {
				t.Fatal(err)
			}
			b, err := Open(ctx, c)
			if err != nil {
				t.Fatal(err)
			}
			defer b.Close()
			if _, err := b.Forget(ctx, "carol"); err != nil {
				t.Fatal(err)
			}
			if err := b.Readmit(ctx, "carol"); err != nil {
				t.Fatal(err)
			}
			var errs []string
			for i := range 3 {
				err := put(a, fmt.Sprint("m", i+2))
				if err == nil {
					return
				}
				errs = append(errs, err.Error())
			}
			t.Fatalf("A, on the live key table, after carol's Forget and Readmit by B: three store puts of carol refused: %s", strings.Join(errs, " | "))
		})
	}
}
