package audit_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/memvault/memvault/audit"
)

// legacyRecords returns n records as an earlier memvault wrote them
// (format 1: no link, each MAC chained to the previous record's MAC under
// key), numbered from 1.
func legacyRecords(key []byte, n int, target string) []audit.Record {
	var out []audit.Record
	prev := ""
	at := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range n {
		r := audit.Record{Seq: int64(i + 1), Time: at.Add(time.Duration(i) * time.Second), Principal: "svc", Op: audit.OpCheckpointRead, Target: fmt.Sprintf("%s-%d", target, i)}
		r.MAC = audit.LegacyMAC(key, prev, &r)
		prev = r.MAC
		out = append(out, r)
	}
	return out
}

// bound returns b's trail bound to its data database, as config opens it:
// a new one is a new process (nothing cached).
func bound(t *testing.T, b backend, key []byte, previous ...[]byte) *audit.Trail {
	t.Helper()
	tr, err := audit.NewTrail(b.table, audit.Options{Key: key, Previous: previous, DatabaseID: b.dbID, Meta: b.meta})
	must(t, err)
	return tr
}

func count(t *testing.T, tr *audit.Trail) int {
	t.Helper()
	n := 0
	must(t, tr.Records(context.Background(), audit.Filter{}, func(audit.Record) error { n++; return nil }))
	return n
}

func chainBegan(t *testing.T, b backend) bool {
	t.Helper()
	began, err := b.meta.ChainBegan(context.Background())
	must(t, err)
	return began
}

// refused checks that the trail fails Verify (by verifier) with
// ErrTampered saying text, and that each writer refuses to extend it
// (ErrTampered) and stores nothing.
func refused(t *testing.T, verifier *audit.Trail, text string, writers ...*audit.Trail) {
	t.Helper()
	ctx := audit.WithPrincipal(context.Background(), "clerk")
	n, err := verifier.Verify(ctx)
	if !errors.Is(err, audit.ErrTampered) || !strings.Contains(err.Error(), text) {
		t.Fatalf("verify: %d, %v; want ErrTampered saying %q", n, err, text)
	}
	before := count(t, verifier)
	for i, w := range writers {
		if err := w.Log(ctx, audit.OpItemRead, "users.carol/diet", "carol", ""); !errors.Is(err, audit.ErrTampered) {
			t.Fatalf("writer %d extended the trail: %v", i, err)
		}
	}
	if after := count(t, verifier); after != before {
		t.Fatalf("%d records, then %d: a refusing writer stored records", before, after)
	}
}

// TestFormat1Downgrade: once the data database records that the trail's
// hash chain began (its first writer of this version marks it, in the data
// database's memvault_meta: out of reach of whoever can write only the
// trail), a trail without a hash-chained record — another database's older
// trail put in its place (same master key), this trail cut back to before
// its upgrade, an emptied trail — fails Verify and is not extended, by a
// writer that has seen the chain begin or a new one. Trails of an earlier
// memvault, and of this version before the mark, still verify and are
// upgraded.
func TestFormat1Downgrade(t *testing.T) {
	ctx := context.Background()
	for name, newBackend := range backends() {
		t.Run(name, func(t *testing.T) {
			t.Run("another database's older trail", func(t *testing.T) {
				b := newBackend(t)
				tr := bound(t, b, k1)
				if n, err := tr.Verify(ctx); err != nil || n != 0 || chainBegan(t, b) {
					t.Fatalf("a fresh database's trail: %d, %v (chain began: %v)", n, err, chainBegan(t, b))
				}
				fill(t, tr, 5)
				if n, err := tr.Verify(ctx); err != nil || n != 5 || !chainBegan(t, b) {
					t.Fatalf("after 5 records: %d, %v (chain began: %v)", n, err, chainBegan(t, b))
				}
				b.put(t, legacyRecords(k1, 3, "other"))
				refused(t, tr, "holds no hash-chained record", tr, bound(t, b, k1))
				b.wipe(t)
				refused(t, bound(t, b, k1), "the trail is empty, but the data database records that its hash chain began", tr, bound(t, b, k1))
			})
			t.Run("cut back to before the upgrade", func(t *testing.T) {
				b := newBackend(t)
				b.put(t, legacyRecords(k1, 4, "carol"))
				if n, err := bound(t, b, k1).Verify(ctx); err != nil || n != 4 {
					t.Fatalf("the older trail before the upgrade: %d, %v", n, err)
				}
				fill(t, bound(t, b, k1), 2) // the first writer of this version
				if n, err := bound(t, b, k1).Verify(ctx); err != nil || n != 6 || !chainBegan(t, b) {
					t.Fatalf("after the upgrade: %d, %v (chain began: %v)", n, err, chainBegan(t, b))
				}
				b.cut(t, 4)
				refused(t, bound(t, b, k1), "holds no hash-chained record", bound(t, b, k1))
			})
			t.Run("written by this version before the mark", func(t *testing.T) {
				b := newBackend(t)
				fill(t, newTrail(t, b.table, b.dbID, k1), 3) // no Meta: as before the fix
				if n, err := bound(t, b, k1).Verify(ctx); err != nil || n != 3 || chainBegan(t, b) {
					t.Fatalf("before the mark: %d, %v (chain began: %v)", n, err, chainBegan(t, b))
				}
				fill(t, bound(t, b, k1), 1)
				if n, err := bound(t, b, k1).Verify(ctx); err != nil || n != 4 || !chainBegan(t, b) {
					t.Fatalf("after the mark: %d, %v (chain began: %v)", n, err, chainBegan(t, b))
				}
				b.wipe(t)
				refused(t, bound(t, b, k1), "the trail is empty", bound(t, b, k1))
			})
		})
	}
}

// TestRetiredKeyRechainsAsFormat1: after a rotation by the book with K1
// still configured as previous, whoever holds K1 and can write the trail
// rewrites all of it — the records after the rotation included — as
// format-1 records under K1 (which verify under any configured key). It
// does not verify, with the current key alone or with K1 too, and the next
// writer does not chain K2 records onto the forged history. A verifier not
// given the data database's record refuses it too: it ends under the
// previous key.
func TestRetiredKeyRechainsAsFormat1(t *testing.T) {
	ctx := context.Background()
	for name, newBackend := range backends() {
		t.Run(name, func(t *testing.T) {
			b := newBackend(t)
			fill(t, bound(t, b, k1), 3)
			fill(t, bound(t, b, k2, k1), 3) // the key change, then 3
			if n, err := bound(t, b, k2).Verify(ctx); err != nil || n != 7 {
				t.Fatalf("after the rotation: %d, %v", n, err)
			}
			b.put(t, legacyRecords(k1, 5, "forged"))
			refused(t, bound(t, b, k2, k1), "holds no hash-chained record", bound(t, b, k2, k1))
			refused(t, bound(t, b, k2), "holds no hash-chained record")
			if n, err := newTrail(t, b.table, b.dbID, k2, k1).Verify(ctx); !errors.Is(err, audit.ErrUnverifiable) || !strings.Contains(err.Error(), "ends under the previous audit key") {
				t.Fatalf("without the data database's record: %d, %v", n, err)
			}
		})
	}
}
