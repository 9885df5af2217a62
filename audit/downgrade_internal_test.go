package audit

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// The two reproductions of the review (format 1 downgrade), adapted: the
// trail is given its data database's record that the hash chain began
// (Meta), as config gives it.

// TestReviewFormat1TrailOfAnotherDatabaseVerifies: a trail made only of
// format-1 records (as an older memvault wrote them, here in database
// "other") put in the place of the trail of database "this" (written by
// this version, so its hash chain began) no longer verifies, and no writer
// extends it. Before the fix it verified: format 1 is bound to no database
// and nothing required a format-2 record.
func TestReviewFormat1TrailOfAnotherDatabaseVerifies(t *testing.T) {
	ctx := context.Background()
	key := make([]byte, 32)
	key[0] = 7
	// The other database's legacy trail (format 1, under the same master key).
	k := newAuditKey(key)
	prev := ""
	var legacy []Record
	for i := 1; i <= 3; i++ {
		r := Record{Seq: int64(i), Time: time.Date(2025, 1, 1, 0, 0, i, 0, time.UTC), Principal: "svc", Op: "checkpoint.put", Target: "t"}
		r.MAC = macV1(&k, prev, &r)
		prev = r.MAC
		legacy = append(legacy, r)
	}

	// This database's trail: written by this version, bound to "this".
	this := NewMemoryTable()
	meta := &MemoryMeta{}
	tr, err := NewTrail(this, Options{Key: key, DatabaseID: "this", Meta: meta})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 5; i++ {
		if err := tr.Log(ctx, "checkpoint.put", "x", "carol", ""); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := tr.Verify(ctx); err != nil {
		t.Fatal(err)
	}
	// The attacker (write access to the trail, no key) swaps in the other
	// database's legacy trail.
	this.Tamper(func([]Record) []Record { return append([]Record(nil), legacy...) })
	n, err := tr.Verify(ctx)
	if !errors.Is(err, ErrTampered) || !strings.Contains(err.Error(), "holds no hash-chained record") {
		t.Errorf("a format-1 trail of another database verified as this database's trail: %d, %v", n, err)
	}
	// Nor does the next writer (another process) chain onto it.
	next, err := NewTrail(this, Options{Key: key, DatabaseID: "this", Meta: meta})
	mustT(t, err)
	if err := next.Log(ctx, "checkpoint.put", "x", "carol", ""); !errors.Is(err, ErrTampered) || !strings.Contains(err.Error(), "refusing to extend it") {
		t.Errorf("a writer extended the other database's legacy trail: %v", err)
	}
}

// TestReviewRetiredKeyRechainsAsFormat1: with the retired key K1 still
// configured as previous (K2 primary), a holder of K1 rewrites the whole
// trail — records after the rotation included — as format-1 records under
// K1. It does not verify (with the data database's record: the chain
// began; without it: the trail ends under a previous key), and the next
// writer does not chain K2 records onto it.
func TestReviewRetiredKeyRechainsAsFormat1(t *testing.T) {
	ctx := context.Background()
	k1, k2 := make([]byte, 32), make([]byte, 32)
	k1[0], k2[0] = 1, 2
	tbl := NewMemoryTable()
	meta := &MemoryMeta{}
	old, _ := NewTrail(tbl, Options{Key: k1, DatabaseID: "db", Meta: meta})
	for i := 0; i < 3; i++ {
		if err := old.Log(ctx, "checkpoint.put", "t", "carol", ""); err != nil {
			t.Fatal(err)
		}
	}
	cur, _ := NewTrail(tbl, Options{Key: k2, Previous: [][]byte{k1}, DatabaseID: "db", Meta: meta})
	for i := 0; i < 3; i++ {
		if err := cur.Log(ctx, "subject.erase", "carol", "carol", ""); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := cur.Verify(ctx); err != nil {
		t.Fatal(err)
	}
	// Rewrite everything as format 1 under K1, the erasures dropped.
	ak := newAuditKey(k1)
	tbl.Tamper(func(rs []Record) []Record {
		var out []Record
		prev := ""
		for i := 0; i < 4; i++ {
			r := Record{Seq: int64(i + 1), Time: rs[0].Time, Principal: "svc", Op: "checkpoint.get", Target: "t"}
			r.MAC = macV1(&ak, prev, &r)
			prev = r.MAC
			out = append(out, r)
		}
		return out
	})
	n, err := cur.Verify(ctx)
	if !errors.Is(err, ErrTampered) || !strings.Contains(err.Error(), "holds no hash-chained record") {
		t.Errorf("a trail rewritten under the previous key verified with the current key primary: %d, %v", n, err)
	}
	// A verifier not given the data database's record still refuses it.
	noMeta, _ := NewTrail(tbl, Options{Key: k2, Previous: [][]byte{k1}, DatabaseID: "db"})
	if n, err := noMeta.Verify(ctx); !errors.Is(err, ErrUnverifiable) || !strings.Contains(err.Error(), "ends under the previous audit key "+ak.id) {
		t.Errorf("without Meta, the rewritten trail: %d, %v", n, err)
	}
	next, _ := NewTrail(tbl, Options{Key: k2, Previous: [][]byte{k1}, DatabaseID: "db", Meta: meta})
	if err := next.Log(ctx, "checkpoint.put", "t", "carol", ""); !errors.Is(err, ErrTampered) {
		t.Errorf("the next writer chained onto the forged history: %v", err)
	}
}

// TestFormat1TrailUnderPreviousKey: a trail of an earlier memvault whose
// last record is under a previous key does not verify with a newer key
// primary — it may have been rewritten by whoever keeps the old key — until
// a writer under the current key, having checked every record, vouches for
// it; then it verifies with the current key alone (the records under the
// old key vouched for by the new one).
func TestFormat1TrailUnderPreviousKey(t *testing.T) {
	ctx := context.Background()
	m := NewMemoryTable()
	appendV1(m, key2, 2)
	appendV1(m, key1, 2) // an earlier memvault rotated back: format 1 has no epochs
	if n, err := trailT(t, m, "db-1", key1, key2).Verify(ctx); err != nil || n != 4 {
		t.Fatalf("with the key of its last record primary: %d, %v", n, err)
	}
	verifyErr(t, trailT(t, m, "db-1", key2, key1), ErrUnverifiable, "(records 1–4, written by an earlier memvault) ends under the previous audit key "+newAuditKey(key1).id)
	logN(t, trailT(t, m, "db-1", key2, key1), 1)
	rep, err := trailT(t, m, "db-1", key2).Check(ctx, nil)
	if err != nil || rep.Records != 5 || rep.Vouched != 2 {
		t.Fatalf("after a record under the current key, with it alone: %+v, %v", rep, err)
	}
}

// hookTable runs before on each Append, then appends to MemoryTable.
type hookTable struct {
	*MemoryTable
	before func(call int)
	calls  int
}

func (h *hookTable) Append(ctx context.Context, chain func(*Record) ([]Record, error)) error {
	h.calls++
	h.before(h.calls)
	return h.MemoryTable.Append(ctx, chain)
}

// TestCatchUpSeesRewrittenHead: a format-1 head rewritten between the
// writer's catch-up and its append (same place, another record, validly
// MACed by whoever keeps the key) is refused, not extended with the link
// of the record that was there.
func TestCatchUpSeesRewrittenHead(t *testing.T) {
	ctx := context.Background()
	h := &hookTable{MemoryTable: NewMemoryTable()}
	appendV1(h.MemoryTable, key1, 3)
	ak := newAuditKey(key1)
	h.before = func(call int) {
		if call != 2 { // the first call finds the head's link unknown; catch-up; the second
			return
		}
		h.Tamper(func(rs []Record) []Record {
			rs[2].Target = "rewritten"
			rs[2].MAC = macV1(&ak, rs[1].MAC, &rs[2])
			return rs
		})
	}
	err := trailT(t, h, "db-1", key1).Log(ctx, OpItemRead, "x", "", "")
	if !errors.Is(err, ErrTampered) || !strings.Contains(err.Error(), "record 3 changed since the writer read it") {
		t.Fatalf("extended a rewritten head: %v", err)
	}
}

// TestOlderProcessAfterTheMark: once the chain began (and is marked), an
// older memvault process that appends format-1 records under the epoch's
// key (during a rolling upgrade) does not stop the trail: it verifies and
// the writers of this version continue it.
func TestOlderProcessAfterTheMark(t *testing.T) {
	ctx := context.Background()
	m, meta := NewMemoryTable(), &MemoryMeta{}
	bound := func() *Trail {
		tr, err := NewTrail(m, Options{Key: key1, DatabaseID: "db-1", Meta: meta})
		mustT(t, err)
		return tr
	}
	logN(t, bound(), 2)
	appendV1(m, key1, 2)
	if n, err := bound().Verify(ctx); err != nil || n != 4 {
		t.Fatalf("after records of an older process: %d, %v", n, err)
	}
	logN(t, bound(), 1)
	if n, err := bound().Verify(ctx); err != nil || n != 5 {
		t.Fatalf("continued: %d, %v", n, err)
	}
}
