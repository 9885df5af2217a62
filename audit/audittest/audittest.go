package audittest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/memvault/memvault/audit"
)

// Backend is a table under test and the storage behind it.
type Backend struct {
	// Table is a fresh, empty table.
	Table audit.Table
	// Put replaces every record the table stores with rs, stored exactly
	// as given (whatever their sequence numbers, links and MACs), through
	// the table's storage and not through Table: as an attacker with
	// write access to the table could.
	Put func(t *testing.T, rs []audit.Record)
}

// Records returns every record b's table stores, in order, read through
// Table.Page.
func Records(t *testing.T, b Backend) []audit.Record {
	t.Helper()
	var out []audit.Record
	var after int64
	for {
		page, err := b.Table.Page(t.Context(), after, 100)
		if err != nil {
			t.Fatalf("Page(%d, 100): %v", after, err)
		}
		out = append(out, page...)
		if len(page) < 100 {
			return out
		}
		after = page[len(page)-1].Seq
	}
}

// Tamper reads b's records, gives them to edit and stores what edit
// returns in their place through b.Put.
func Tamper(t *testing.T, b Backend, edit func([]audit.Record) []audit.Record) {
	t.Helper()
	b.Put(t, edit(Records(t, b)))
}

// Audit keys of the suite: k1, and k2 that replaced it.
var (
	k1 = bytes.Repeat([]byte{0x51}, 32)
	k2 = bytes.Repeat([]byte{0x52}, 32)
)

// dbID is the data database the suite's trails are bound to.
const dbID = "audittest-database"

type suite struct {
	newBackend func(t *testing.T) Backend
}

// env is a backend with the data database's record that the hash chain
// began, shared by every trail of a case.
type env struct {
	Backend
	meta *audit.MemoryMeta
}

func (s *suite) env(t *testing.T) *env {
	b := s.newBackend(t)
	if b.Table == nil || b.Put == nil {
		t.Fatal("audittest: the backend needs a Table and a Put")
	}
	return &env{Backend: b, meta: &audit.MemoryMeta{}}
}

// trail returns a new trail of e (as a new process would open it) under
// key, bound to the suite's database.
func (e *env) trail(t *testing.T, key []byte, previous ...[]byte) *audit.Trail {
	t.Helper()
	return e.trailOf(t, dbID, key, previous...)
}

func (e *env) trailOf(t *testing.T, db string, key []byte, previous ...[]byte) *audit.Trail {
	t.Helper()
	tr, err := audit.NewTrail(e.Table, audit.Options{Key: key, Previous: previous, DatabaseID: db, Meta: e.meta})
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// fill appends n records, by two principals about two subjects.
func fill(t *testing.T, tr *audit.Trail, n int) {
	t.Helper()
	for i := range n {
		ctx := audit.WithPrincipal(context.Background(), fmt.Sprintf("clerk-%d", i%2))
		if err := tr.Log(ctx, audit.OpCheckpointRead, fmt.Sprintf("carol:visit-%d", i), []string{"carol", "dave"}[i%2], "00aa11bb22cc33dd"); err != nil {
			t.Fatalf("log record %d: %v", i+1, err)
		}
	}
}

func verified(t *testing.T, tr *audit.Trail, want int64) {
	t.Helper()
	if n, err := tr.Verify(t.Context()); err != nil || n != want {
		t.Fatalf("Verify = %d, %v; want %d, nil", n, err, want)
	}
}

func tampered(t *testing.T, err error, what string) {
	t.Helper()
	if !errors.Is(err, audit.ErrTampered) {
		t.Fatalf("%s: %v, want audit.ErrTampered", what, err)
	}
}

// RunTable runs the suite. newBackend is called for every case and must
// return a backend over an empty table.
func RunTable(t *testing.T, newBackend func(t *testing.T) Backend) {
	s := &suite{newBackend: newBackend}
	t.Run("Empty", s.testEmpty)
	t.Run("RoundTrip", s.testRoundTrip)
	t.Run("AppendFailure", s.testAppendFailure)
	t.Run("ConcurrentWriters", s.testConcurrent)
	t.Run("GroupCommit", s.testGroupCommit)
	t.Run("Tamper", s.testTamper)
	t.Run("Anchors", s.testAnchors)
	t.Run("OtherDatabase", s.testOtherDatabase)
	t.Run("KeyChange", s.testKeyChange)
}

func (s *suite) testEmpty(t *testing.T) {
	e := s.env(t)
	page, err := e.Table.Page(t.Context(), 0, 10)
	if err != nil || len(page) != 0 {
		t.Fatalf("Page of an empty table = %v, %v", page, err)
	}
	verified(t, e.trail(t, k1), 0)
}

// testRoundTrip: records come back exactly as the trail stored them, in
// order, paged as asked.
func (s *suite) testRoundTrip(t *testing.T) {
	e := s.env(t)
	tr := e.trail(t, k1)
	before := time.Now().Add(-time.Second)
	ctx := audit.WithPrincipal(context.Background(), "Dr. Ōtsuka 医師")
	es := []audit.Entry{
		{Op: audit.OpItemWrite, Target: "users.carol/diet ✓", Subject: "carol", KeyID: "00aa11bb22cc33dd"},
		{Op: audit.OpItemRead, Target: "users.carol/diet ✓", Subject: "carol"},
		{Op: audit.OpThreadDelete, Target: "t-1"},
		{Op: audit.OpItemSearch, Target: "", Subject: "dave"},
		{Op: audit.OpSubjectErase, Target: "dave", Subject: "dave"},
	}
	if err := tr.LogAll(ctx, es); err != nil {
		t.Fatal(err)
	}
	rs := Records(t, e.Backend)
	if len(rs) != len(es) {
		t.Fatalf("%d records, want %d", len(rs), len(es))
	}
	for i, r := range rs {
		w := es[i]
		if r.Seq != int64(i+1) || r.Principal != "Dr. Ōtsuka 医師" || r.Op != w.Op || r.Target != w.Target || r.Subject != w.Subject || r.KeyID != w.KeyID {
			t.Errorf("record %d = %+v, want entry %+v", i+1, r, w)
		}
		if r.Time.Before(before) || r.Time.After(time.Now().Add(time.Second)) || !r.Time.Equal(rs[0].Time) || r.Time.Nanosecond()%1000 != 0 {
			t.Errorf("record %d: time %v", i+1, r.Time)
		}
		if len(r.Link) != 64 || !strings.HasPrefix(r.MAC, tr.KeyID()+":") {
			t.Errorf("record %d: link %q, MAC %q", i+1, r.Link, r.MAC)
		}
	}
	page, err := e.Table.Page(t.Context(), 2, 2)
	if err != nil || len(page) != 2 || page[0].Seq != 3 || page[1].Seq != 4 {
		t.Fatalf("Page(2, 2) = %+v, %v; want records 3 and 4", page, err)
	}
	if page[0].Link != rs[2].Link || page[0].MAC != rs[2].MAC {
		t.Fatalf("Page(2, 2) record 3 differs from Page(0, ...)'s")
	}
	if page, err := e.Table.Page(t.Context(), 5, 10); err != nil || len(page) != 0 {
		t.Fatalf("Page after the last record = %+v, %v", page, err)
	}
	verified(t, e.trail(t, k1), 5)
}

// testAppendFailure: Append passes chain the last record (nil when the
// table is empty) and stores nothing when chain fails.
func (s *suite) testAppendFailure(t *testing.T) {
	e := s.env(t)
	ctx := t.Context()
	errChain := errors.New("audittest: chain refused")
	var sawNil bool
	err := e.Table.Append(ctx, func(last *audit.Record) ([]audit.Record, error) {
		sawNil = last == nil
		return []audit.Record{{Seq: 1, Time: time.Now().UTC(), Op: "x", Link: strings.Repeat("0", 64), MAC: "m"}}, errChain
	})
	if !errors.Is(err, errChain) || !sawNil {
		t.Fatalf("Append of a failing chain on an empty table = %v (saw nil last: %v), want the chain's error", err, sawNil)
	}
	if rs := Records(t, e.Backend); len(rs) != 0 {
		t.Fatalf("a failed append stored %d records", len(rs))
	}
	tr := e.trail(t, k1)
	fill(t, tr, 2)
	rs := Records(t, e.Backend)
	err = e.Table.Append(ctx, func(last *audit.Record) ([]audit.Record, error) {
		if last == nil || last.Seq != 2 || last.Link != rs[1].Link || last.MAC != rs[1].MAC {
			t.Errorf("chain saw last record %+v, want record 2 (its seq, link and MAC)", last)
		}
		return nil, errChain
	})
	if !errors.Is(err, errChain) {
		t.Fatalf("Append = %v, want the chain's error", err)
	}
	verified(t, tr, 2)
}

// testConcurrent: writers, each its own trail (as processes would have),
// append at once; the trail holds all their records in one chain.
func (s *suite) testConcurrent(t *testing.T) {
	e := s.env(t)
	var wg sync.WaitGroup
	for w := range 4 {
		tr := e.trail(t, k1)
		wg.Go(func() {
			ctx := audit.WithPrincipal(context.Background(), fmt.Sprint("worker-", w))
			for i := range 10 {
				if err := tr.Log(ctx, audit.OpItemWrite, fmt.Sprintf("users.u%d/k%d", w, i), fmt.Sprint("u", w), ""); err != nil {
					t.Error(err)
				}
			}
			es := make([]audit.Entry, 3)
			for i := range es {
				es[i] = audit.Entry{Op: audit.OpItemRead, Target: fmt.Sprintf("batch.w%d/%d", w, i)}
			}
			if err := tr.LogAll(ctx, es); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	verified(t, e.trail(t, k1), 52)
}

// testGroupCommit: many goroutines of two processes (a trail each) append
// at once, so that each trail's commits serve several callers; every
// acknowledged record is stored once, each goroutine's in the order it
// appended them, and the trail verifies.
func (s *suite) testGroupCommit(t *testing.T) {
	e := s.env(t)
	const procs, writers, each = 2, 16, 12
	var wg sync.WaitGroup
	var mu sync.Mutex
	acked := map[string]bool{}
	want := int64(0)
	for p := range procs {
		tr := e.trail(t, k1)
		for w := range writers {
			wg.Go(func() {
				ctx := audit.WithPrincipal(context.Background(), fmt.Sprintf("p%d-w%d", p, w))
				for i := range each {
					target := fmt.Sprintf("p%d/w%d/%03d", p, w, i)
					es := []audit.Entry{{Op: audit.OpItemWrite, Target: target}}
					if i%4 == 3 {
						es = append(es, audit.Entry{Op: audit.OpItemRead, Target: target + "+"})
					}
					if err := tr.LogAll(ctx, es); err != nil {
						t.Error(err)
						return
					}
					mu.Lock()
					for _, e := range es {
						acked[e.Target] = true
					}
					want += int64(len(es))
					mu.Unlock()
				}
			})
		}
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	verified(t, e.trail(t, k1), want)
	last := map[string]string{} // principal: its last target
	for _, r := range Records(t, e.Backend) {
		if !acked[r.Target] {
			t.Fatalf("record %d (%s) stored twice or never acknowledged", r.Seq, r.Target)
		}
		delete(acked, r.Target)
		if r.Target <= last[r.Principal] {
			t.Fatalf("record %d (%s) after %s of the same writer", r.Seq, r.Target, last[r.Principal])
		}
		last[r.Principal] = r.Target
	}
	if len(acked) != 0 {
		t.Fatalf("%d acknowledged records missing", len(acked))
	}
}

// testTamper: each kind of tampering with the stored records makes Verify
// fail with audit.ErrTampered, and the writer refuse to extend what it can
// no longer vouch for.
func (s *suite) testTamper(t *testing.T) {
	cases := map[string]func([]audit.Record) []audit.Record{
		"edit principal": func(rs []audit.Record) []audit.Record { rs[3].Principal = "nobody"; return rs },
		"edit op":        func(rs []audit.Record) []audit.Record { rs[3].Op = audit.OpItemRead; return rs },
		"edit target":    func(rs []audit.Record) []audit.Record { rs[3].Target = "dave:visit-3"; return rs },
		"edit subject":   func(rs []audit.Record) []audit.Record { rs[3].Subject = ""; return rs },
		"edit key id":    func(rs []audit.Record) []audit.Record { rs[3].KeyID = "ffffffffffffffff"; return rs },
		"edit time":      func(rs []audit.Record) []audit.Record { rs[3].Time = rs[3].Time.Add(time.Second); return rs },
		"edit link":      func(rs []audit.Record) []audit.Record { rs[3].Link = strings.Repeat("a", 64); return rs },
		"edit MAC":       func(rs []audit.Record) []audit.Record { rs[3].MAC = "nonsense"; return rs },
		"edit last":      func(rs []audit.Record) []audit.Record { rs[len(rs)-1].Target = "forged"; return rs },
		"copied MAC": func(rs []audit.Record) []audit.Record {
			rs[3].Principal = "nobody"
			rs[3].MAC, rs[3].Link = rs[2].MAC, rs[2].Link
			return rs
		},
		"delete": func(rs []audit.Record) []audit.Record { return append(rs[:3], rs[4:]...) },
		"delete and renumber": func(rs []audit.Record) []audit.Record {
			rs = append(rs[:3], rs[4:]...)
			for i := 3; i < len(rs); i++ {
				rs[i].Seq--
			}
			return rs
		},
		"delete the first": func(rs []audit.Record) []audit.Record {
			rs = rs[1:]
			for i := range rs {
				rs[i].Seq--
			}
			return rs
		},
		"insert": func(rs []audit.Record) []audit.Record {
			forged := rs[2]
			forged.Target = "forged"
			rs = append(rs[:3], append([]audit.Record{forged}, rs[3:]...)...)
			for i := 3; i < len(rs); i++ {
				rs[i].Seq = int64(i + 1)
			}
			return rs
		},
		"append": func(rs []audit.Record) []audit.Record {
			forged := rs[len(rs)-1]
			forged.Seq++
			forged.Target = "forged"
			return append(rs, forged)
		},
		"reorder": func(rs []audit.Record) []audit.Record {
			rs[3], rs[4] = rs[4], rs[3]
			rs[3].Seq, rs[4].Seq = rs[4].Seq, rs[3].Seq
			return rs
		},
		"gap": func(rs []audit.Record) []audit.Record {
			for i := 4; i < len(rs); i++ {
				rs[i].Seq += 10
			}
			return rs
		},
		"wipe": func([]audit.Record) []audit.Record { return nil },
	}
	for name, edit := range cases {
		t.Run(name, func(t *testing.T) {
			e := s.env(t)
			fill(t, e.trail(t, k1), 8)
			verified(t, e.trail(t, k1), 8)
			Tamper(t, e.Backend, edit)
			_, err := e.trail(t, k1).Verify(t.Context())
			tampered(t, err, "Verify after "+name)
		})
	}
	// A writer does not vouch for a last record that does not hold.
	t.Run("writer refuses", func(t *testing.T) {
		e := s.env(t)
		fill(t, e.trail(t, k1), 3)
		Tamper(t, e.Backend, func(rs []audit.Record) []audit.Record { rs[2].MAC = "nonsense"; return rs })
		err := e.trail(t, k1).Log(t.Context(), audit.OpItemRead, "x", "", "")
		tampered(t, err, "Log after the last record's MAC was edited")
		if n := len(Records(t, e.Backend)); n != 3 {
			t.Fatalf("the refused writer stored something: %d records", n)
		}
	})
}

// testAnchors: an anchor kept outside catches the trail's tail cut off or
// rolled back and rewritten, which Verify alone cannot tell from a trail
// that ended there.
func (s *suite) testAnchors(t *testing.T) {
	anchored := func(t *testing.T) (*env, audit.Anchor) {
		e := s.env(t)
		tr := e.trail(t, k1)
		fill(t, tr, 4)
		a, err := tr.Anchor(t.Context())
		if err != nil || a.Seq != 5 || a.DatabaseID != dbID {
			t.Fatalf("Anchor = %+v, %v", a, err)
		}
		fill(t, tr, 2)
		r, err := e.trail(t, k1).Check(t.Context(), []audit.Anchor{a})
		if err != nil || r.Records != 7 || r.Anchors != 1 {
			t.Fatalf("Check of the intact trail = %+v, %v", r, err)
		}
		return e, a
	}
	t.Run("truncate the tail", func(t *testing.T) {
		e, a := anchored(t)
		Tamper(t, e.Backend, func(rs []audit.Record) []audit.Record { return rs[:3] })
		_, err := e.trail(t, k1).VerifyAnchors(t.Context(), []audit.Anchor{a})
		tampered(t, err, "VerifyAnchors of a trail cut below its anchor")
	})
	t.Run("roll back and rewrite", func(t *testing.T) {
		e, a := anchored(t)
		Tamper(t, e.Backend, func(rs []audit.Record) []audit.Record { return rs[:4] })
		fill(t, e.trail(t, k1), 5) // whoever holds the key writes on
		_, err := e.trail(t, k1).VerifyAnchors(t.Context(), []audit.Anchor{a})
		tampered(t, err, "VerifyAnchors of a trail rolled back and rewritten")
	})
	t.Run("forged anchor", func(t *testing.T) {
		e, a := anchored(t)
		a.Seq = 6
		if _, err := e.trail(t, k1).VerifyAnchors(t.Context(), []audit.Anchor{a}); !errors.Is(err, audit.ErrInvalidAnchor) {
			t.Fatalf("VerifyAnchors with an edited anchor = %v, want audit.ErrInvalidAnchor", err)
		}
	})
}

// testOtherDatabase: a trail bound to one database fails Verify where
// another database's trail is expected, even under the same key.
func (s *suite) testOtherDatabase(t *testing.T) {
	e := s.env(t)
	fill(t, e.trailOf(t, "another-database", k1), 3)
	_, err := e.trail(t, k1).Verify(t.Context())
	tampered(t, err, "Verify of another database's trail")
}

// testKeyChange: after the master key changed, the first record is a key
// change under both keys; the trail then verifies under the new key alone,
// and cut back to before the change it does not verify.
func (s *suite) testKeyChange(t *testing.T) {
	e := s.env(t)
	old := e.trail(t, k1)
	fill(t, old, 3)
	tr := e.trail(t, k2, k1)
	fill(t, tr, 1)
	rs := Records(t, e.Backend)
	if len(rs) != 5 || rs[3].Op != audit.OpKeyChange || rs[3].Target != old.KeyID()+" -> "+tr.KeyID() {
		t.Fatalf("records after the key change: %+v", rs)
	}
	r, err := e.trail(t, k2).Check(t.Context(), nil)
	if err != nil || r.Records != 5 || r.Vouched != 3 {
		t.Fatalf("Check under the new key alone = %+v, %v; want 5 records, 3 vouched for", r, err)
	}
	if _, err := e.trail(t, k1).Verify(t.Context()); !errors.Is(err, audit.ErrUnverifiable) {
		t.Fatalf("Verify under the old key alone = %v, want audit.ErrUnverifiable", err)
	}
	Tamper(t, e.Backend, func(rs []audit.Record) []audit.Record { return rs[:3] })
	_, err = e.trail(t, k2, k1).Verify(t.Context())
	if !errors.Is(err, audit.ErrUnverifiable) || !errors.Is(err, audit.ErrTampered) {
		t.Fatalf("Verify of a trail cut back to before the key change = %v, want audit.ErrUnverifiable and audit.ErrTampered", err)
	}
}
