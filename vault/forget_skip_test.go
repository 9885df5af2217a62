package vault

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/memvault/memvault/keys"
)

// TestForgetUnderSkipKeyCheck (session 24's closing note): a Forget run
// with MEMVAULT_DANGEROUS_SKIP_KEY_CHECK destroyed the subject's keys and
// counted the erasure in the key table, but wrote no intent, no
// erased_subject mark and did not move the database's count: a process
// on a copy of the key table from before could go on writing the erased
// subject, and a Forget killed part-way was finished by no Open. The flag
// skips Open's checks, not the erasure's records: on the key table the
// database pinned, Forget records them as without it (a lost master key
// included: the way to erase the subjects whose keys it wrapped); on
// another table (the pins differ, or a backup behind the count) it is
// refused, naming why, and destroys nothing.
func TestForgetUnderSkipKeyCheck(t *testing.T) {
	ctx := context.Background()
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			c := subjectsConfigOn(t, backend == "postgres")
			h, err := Open(ctx, c)
			if err != nil {
				t.Fatal(err)
			}
			for _, th := range []string{"carol:1", "dave:1", "erin:1"} {
				if _, err := putCarolS22(ctx, h, th, th+" notes"); err != nil {
					t.Fatal(err)
				}
			}
			h.Close()

			for _, tc := range []struct{ subject, key string }{{"carol", ""}, {"dave", otherKey}} {
				skip := c
				skip.DangerousSkipKeyCheck = true
				if tc.key != "" { // a lost master key
					skip.Keys.Primary = tc.key
				}
				h, err := Open(ctx, skip)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := h.Forget(ctx, tc.subject); err != nil {
					h.Close()
					t.Fatalf("Forget(%s) under skip-key-check: %v", tc.subject, err)
				}
				marks := auditMeta(skip, h).(erasureMarks)
				seen, err := markCount(ctx, marks, keyErasuresMark)
				if err != nil {
					t.Fatal(err)
				}
				have, err := h.keyTable.Erasures(ctx)
				if err != nil {
					t.Fatal(err)
				}
				guard, _, err := marks.MarkValue(ctx, keys.ErasedSubjectMark(tc.subject))
				if err != nil {
					t.Fatal(err)
				}
				done, _, err := marks.MarkValue(ctx, erasureDoneMark(have))
				if err != nil {
					t.Fatal(err)
				}
				h.Close()
				if seen != have || guard != fmt.Sprint(have) || done != "1" {
					t.Fatalf("Forget(%s) under skip-key-check: the key table counts %d erasures, the database has seen %d; its erased_subject mark %q "+
						"and done mark %q; want the erasure recorded (%d, %q, \"1\")", tc.subject, have, seen, guard, done, have, fmt.Sprint(have))
				}
			}

			// Another key table, opened through the flag: Forget refused.
			other := c
			other.DangerousSkipKeyCheck = true
			if backend == "postgres" {
				other.KeyTable = fmt.Sprintf("keys_other_%d", time.Now().UnixNano())
			} else {
				other.KeyTable = filepath.Join(t.TempDir(), "other.keys")
			}
			h, err = Open(ctx, other)
			if err != nil {
				t.Fatalf("another key table under skip-key-check: %v", err)
			}
			defer h.Close()
			before, err := h.keyTable.Erasures(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := h.Forget(ctx, "erin"); !errors.Is(err, ErrSubjectsChanged) {
				t.Fatalf("Forget(erin) on another key table under skip-key-check: %v, want ErrSubjectsChanged", err)
			}
			if after, _ := h.keyTable.Erasures(ctx); after != before {
				t.Fatalf("the refused Forget counted an erasure: %d → %d", before, after)
			}
		})
	}
}
