package audit

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

var (
	key1 = bytes.Repeat([]byte{5}, 32)
	key2 = bytes.Repeat([]byte{7}, 32)
)

func mustT(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func trailT(t *testing.T, tb Table, dbID string, key []byte, previous ...[]byte) *Trail {
	t.Helper()
	tr, err := NewTrail(tb, Options{Key: key, Previous: previous, DatabaseID: dbID})
	mustT(t, err)
	return tr
}

func logN(t *testing.T, tr *Trail, n int) {
	t.Helper()
	for i := range n {
		mustT(t, tr.Log(WithPrincipal(context.Background(), "clerk"), OpItemRead, fmt.Sprintf("users.carol/k%d", i), "carol", ""))
	}
}

// appendV1 appends n records as memvault did before the hash chain: each
// MAC chained to the previous record's MAC under k, no link.
func appendV1(m *MemoryTable, k []byte, n int) {
	ak := newAuditKey(k)
	m.Tamper(func(rs []Record) []Record {
		for i := range n {
			prev, seq := "", int64(0)
			if len(rs) > 0 {
				prev, seq = rs[len(rs)-1].MAC, rs[len(rs)-1].Seq
			}
			r := Record{Seq: seq + 1, Time: time.Now().UTC().Truncate(time.Microsecond), Principal: "old-clerk", Op: OpCheckpointRead, Target: fmt.Sprintf("carol:v1-%d", i), Subject: "carol"}
			r.MAC = macV1(&ak, prev, &r)
			rs = append(rs, r)
		}
		return rs
	})
}

func verifyErr(t *testing.T, tr *Trail, want error, text string) {
	t.Helper()
	n, err := tr.Verify(context.Background())
	if !errors.Is(err, want) || !strings.Contains(err.Error(), text) {
		t.Fatalf("verify: %d, %v; want %v saying %q", n, err, want, text)
	}
}

// TestFormat1Trail: a trail written before the hash chain verifies as it
// did (every record under a configured key); a writer continues it only
// after checking every record (the first new record vouches for them) and
// binds it to the database from there; records an older process appends
// afterwards must be under the current epoch's key; after a rotation by the
// book the whole trail verifies with the new key alone.
func TestFormat1Trail(t *testing.T) {
	ctx := context.Background()
	m := NewMemoryTable()
	appendV1(m, key1, 4)
	if n, err := trailT(t, m, "db-1", key1).Verify(ctx); err != nil || n != 4 {
		t.Fatalf("format-1 trail: %d, %v", n, err)
	}
	verifyErr(t, trailT(t, m, "db-1", key2), ErrTampered, "record 1 does not match its MAC under any configured key")

	// A tampered format-1 trail does not verify (the next record's MAC
	// covers the edited one's MAC, not its fields), and is not continued.
	m.Tamper(func(rs []Record) []Record { rs[1].Target = "dave:v1"; return rs })
	verifyErr(t, trailT(t, m, "db-1", key1), ErrTampered, "record 2 does not match its MAC under any configured key")
	err := trailT(t, m, "db-1", key1).Log(ctx, OpItemRead, "x", "", "")
	if !errors.Is(err, ErrTampered) || !strings.Contains(err.Error(), "record 2 (written by an earlier memvault) does not match its MAC") {
		t.Fatalf("continued a tampered trail: %v", err)
	}
	m.Tamper(func(rs []Record) []Record { rs[1].Target = "carol:v1-1"; return rs })

	tr := trailT(t, m, "db-1", key1)
	logN(t, tr, 2) // records 5, 6: the hash chain begins
	if n, err := tr.Verify(ctx); err != nil || n != 6 {
		t.Fatalf("upgraded trail: %d, %v", n, err)
	}
	verifyErr(t, trailT(t, m, "db-2", key1), ErrTampered, "record 5 does not match its MAC: it was edited, or the trail belongs to another database")

	// An older process appends under the epoch's key: fine, and the writer
	// catches up from where it was.
	appendV1(m, key1, 2)
	logN(t, tr, 1)
	if n, err := trailT(t, m, "db-1", key1).Verify(ctx); err != nil || n != 9 {
		t.Fatalf("after format-1 records of an older process: %d, %v", n, err)
	}
	// An older process under another configured key is refused.
	appendV1(m, key2, 1)
	verifyErr(t, trailT(t, m, "db-1", key1, key2), ErrTampered, "record 10 does not match its MAC")
	m.Tamper(func(rs []Record) []Record { return rs[:9] })

	// Rotation by the book, then the old key retired.
	logN(t, trailT(t, m, "db-1", key2, key1), 1) // key change (10), record 11
	rep, err := trailT(t, m, "db-1", key2).Check(ctx, nil)
	if err != nil || rep.Records != 11 || rep.Vouched != 9 {
		t.Fatalf("after the rotation, with the new key alone: %+v, %v", rep, err)
	}
	// An edit of a format-1 record is still caught: the hash chain moves.
	m.Tamper(func(rs []Record) []Record { rs[0].Principal = "nobody"; return rs })
	verifyErr(t, trailT(t, m, "db-1", key2), ErrTampered, "record 5 does not match its MAC")
}

// forge appends r after the last record with its link computed (which
// needs no key) and the MAC auth returns for it.
func forge(m *MemoryTable, r Record, auth func(link string) string) {
	m.Tamper(func(rs []Record) []Record {
		last := rs[len(rs)-1]
		r.Seq, r.Time = last.Seq+1, time.Now().UTC().Truncate(time.Microsecond)
		r.Link = linkOf(last.Link, &r, "")
		r.MAC = auth(r.Link)
		return append(rs, r)
	})
}

// TestRetiredKeyForgesNothingLater: after a key change to K2, a record
// MACed under K1 — or a key change back to K1 that K2 did not MAC — does
// not verify, whichever keys the verifier holds besides K2; nor does a
// record whose stored link or MAC was edited.
func TestRetiredKeyForgesNothingLater(t *testing.T) {
	ctx := context.Background()
	a1, a2 := newAuditKey(key1), newAuditKey(key2)
	setup := func() *MemoryTable {
		m := NewMemoryTable()
		logN(t, trailT(t, m, "db-1", key1), 3)
		logN(t, trailT(t, m, "db-1", key2, key1), 1) // key change (4), record 5
		return m
	}
	m := setup()
	forge(m, Record{Principal: "admin", Op: OpSubjectErase, Target: "carol", Subject: "carol"}, a1.auth)
	for _, tr := range []*Trail{trailT(t, m, "db-1", key2), trailT(t, m, "db-1", key2, key1)} {
		verifyErr(t, tr, ErrTampered, "record 6 is under audit key "+a1.id+", but the records before it are under "+a2.id)
	}

	m = setup()
	forge(m, Record{Op: OpKeyChange, Target: a2.id + " -> " + a1.id}, func(link string) string {
		return a1.auth(link) + "," + a2.id + ":" + strings.Repeat("0", 64)
	})
	forge(m, Record{Principal: "admin", Op: OpSubjectErase, Target: "carol"}, a1.auth)
	for _, tr := range []*Trail{trailT(t, m, "db-1", key2), trailT(t, m, "db-1", key2, key1)} {
		verifyErr(t, tr, ErrTampered, "record 6 does not match its MAC")
	}

	m = setup()
	m.Tamper(func(rs []Record) []Record { rs[4].Link = strings.Repeat("a", 64); return rs })
	verifyErr(t, trailT(t, m, "db-1", key2), ErrTampered, "record 5's stored link was altered")
	m = setup()
	m.Tamper(func(rs []Record) []Record { rs[4].MAC = "nonsense"; return rs })
	verifyErr(t, trailT(t, m, "db-1", key2), ErrTampered, "record 5 has a malformed MAC")

	// The writer does not vouch, under a new key, for a last record that
	// does not hold under the old one (its link recomputed after an edit).
	m = NewMemoryTable()
	logN(t, trailT(t, m, "db-1", key1), 3)
	m.Tamper(func(rs []Record) []Record {
		rs[2].Principal = "nobody"
		rs[2].Link = linkOf(rs[1].Link, &rs[2], "")
		return rs
	})
	err := trailT(t, m, "db-1", key2, key1).Log(ctx, OpItemRead, "x", "", "")
	if !errors.Is(err, ErrTampered) || !strings.Contains(err.Error(), "refusing to vouch") {
		t.Fatalf("vouched for a tampered trail: %v", err)
	}
}
