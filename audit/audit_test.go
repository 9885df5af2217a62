package audit_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/memvault/memvault/audit"
	"github.com/memvault/memvault/audit/pgaudit"
	"github.com/memvault/memvault/audit/sqliteaudit"
	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/checkpointer/sqlitesaver"
	"github.com/memvault/memvault/memvaulttest/pgtest"
	"github.com/memvault/memvault/memvaulttest/testkeys"
	"github.com/memvault/memvault/store"
	"github.com/memvault/memvault/store/sqlitestore"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

var key = bytes.Repeat([]byte{5}, 32)

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func trail(t testing.TB, tb audit.Table) *audit.Trail {
	t.Helper()
	tr, err := audit.New(tb, key)
	must(t, err)
	return tr
}

// fill appends n records by two principals about two subjects.
func fill(t *testing.T, tr *audit.Trail, n int) {
	t.Helper()
	for i := range n {
		ctx := audit.WithPrincipal(context.Background(), fmt.Sprintf("clerk-%d", i%2))
		must(t, tr.Log(ctx, audit.OpCheckpointRead, fmt.Sprintf("carol:visit-%d", i), []string{"carol", "dave"}[i%2], "00aa"))
	}
}

// TestTamperingDetected: every kind of tampering with the stored records —
// an edited field, a deleted record, an inserted one, two swapped — makes
// Verify fail and name the record; the untouched trail verifies.
func TestTamperingDetected(t *testing.T) {
	ctx := context.Background()
	for name, tamper := range map[string]func([]audit.Record) []audit.Record{
		"edit principal": func(rs []audit.Record) []audit.Record { rs[3].Principal = "nobody"; return rs },
		"edit target":    func(rs []audit.Record) []audit.Record { rs[3].Target = "dave:visit-3"; return rs },
		"edit time":      func(rs []audit.Record) []audit.Record { rs[3].Time = rs[3].Time.Add(time.Second); return rs },
		"delete":         func(rs []audit.Record) []audit.Record { return append(rs[:3], rs[4:]...) },
		"delete and renumber": func(rs []audit.Record) []audit.Record {
			rs = append(rs[:3], rs[4:]...)
			for i := 3; i < len(rs); i++ {
				rs[i].Seq--
			}
			return rs
		},
		"insert": func(rs []audit.Record) []audit.Record {
			forged := rs[2]
			forged.Target = "forged"
			return append(rs[:3], append([]audit.Record{forged}, rs[3:]...)...)
		},
		"reorder": func(rs []audit.Record) []audit.Record {
			rs[3], rs[4] = rs[4], rs[3]
			rs[3].Seq, rs[4].Seq = rs[4].Seq, rs[3].Seq
			return rs
		},
		"edited with a copied MAC": func(rs []audit.Record) []audit.Record {
			rs[3].Principal = "nobody"
			rs[3].MAC = rs[2].MAC
			return rs
		},
	} {
		t.Run(name, func(t *testing.T) {
			tb := audit.NewMemoryTable()
			tr := trail(t, tb)
			fill(t, tr, 8)
			if n, err := tr.Verify(ctx); err != nil || n != 8 {
				t.Fatalf("untouched trail: %d, %v", n, err)
			}
			tb.Tamper(tamper)
			if _, err := tr.Verify(ctx); !errors.Is(err, audit.ErrTampered) {
				t.Fatalf("after %s: %v, want ErrTampered", name, err)
			}
		})
	}
	// Another key does not verify the trail.
	tb := audit.NewMemoryTable()
	fill(t, trail(t, tb), 3)
	other, _ := audit.New(tb, bytes.Repeat([]byte{6}, 32))
	if _, err := other.Verify(ctx); !errors.Is(err, audit.ErrTampered) {
		t.Fatalf("verified under another key: %v", err)
	}
	if _, err := audit.New(tb, []byte("short")); err == nil {
		t.Fatal("a short key was accepted")
	}
}

// tables opens the SQLite and PostgreSQL trails.
func tables(t *testing.T) map[string]audit.Table {
	sq, err := sqliteaudit.Open(t.Context(), filepath.Join(t.TempDir(), "audit.db"))
	must(t, err)
	t.Cleanup(func() { sq.Close() })
	pool, schema := pgtest.Schema(t) // a trail of the test's own, named
	pg, err := pgaudit.New(pool, pgaudit.Options{Schema: schema})
	must(t, err)
	must(t, pg.Setup(t.Context()))
	return map[string]audit.Table{"memory": audit.NewMemoryTable(), "sqlite": sq, "postgres": pg}
}

// TestConcurrentWriters: 4 writers (each its own Trail, as processes would
// have) append 25 records and a batch of 5 each at once; the trail holds
// all 120, in one unbroken chain, and filters by subject and time.
func TestConcurrentWriters(t *testing.T) {
	ctx := context.Background()
	for name, tb := range tables(t) {
		t.Run(name, func(t *testing.T) {
			start := time.Now().Add(-time.Second)
			var wg sync.WaitGroup
			for w := range 4 {
				tr := trail(t, tb)
				wg.Go(func() {
					for i := range 25 {
						if err := tr.Log(audit.WithPrincipal(ctx, fmt.Sprint("worker-", w)), audit.OpItemWrite, fmt.Sprintf("users.u%d/k%d", w, i), fmt.Sprint("u", w), ""); err != nil {
							t.Error(err)
						}
					}
					// and a batch of 5, appended in one transaction
					var es []audit.Entry
					for i := range 5 {
						es = append(es, audit.Entry{Op: audit.OpItemRead, Target: fmt.Sprintf("batch.w%d/%d", w, i)})
					}
					if err := tr.LogAll(ctx, es); err != nil {
						t.Error(err)
					}
				})
			}
			wg.Wait()
			tr := trail(t, tb)
			n, err := tr.Verify(ctx)
			if err != nil || n != 120 {
				t.Fatalf("verify: %d, %v", n, err)
			}
			var u2 int
			must(t, tr.Records(ctx, audit.Filter{Subject: "u2", Since: start}, func(r audit.Record) error {
				if r.Principal != "worker-2" || r.Op != audit.OpItemWrite {
					t.Fatalf("record %+v", r)
				}
				u2++
				return nil
			}))
			if u2 != 25 {
				t.Fatalf("%d records of u2", u2)
			}
			var later int
			must(t, tr.Records(ctx, audit.Filter{Since: time.Now().Add(time.Hour)}, func(audit.Record) error { later++; return nil }))
			if later != 0 {
				t.Fatalf("%d records in the future", later)
			}
		})
	}
}

// TestAuditedSaverAndStore: reads, writes and deletes through the audited
// saver and store are recorded, with the principal; values are not.
func TestAuditedSaverAndStore(t *testing.T) {
	ctx := audit.WithPrincipal(context.Background(), "dr.smith")
	dir := t.TempDir()
	tb := audit.NewMemoryTable()
	tr := trail(t, tb)
	sv, err := sqlitesaver.Open(ctx, filepath.Join(dir, "d.db"), sqlitesaver.Options{Serde: testkeys.Encrypting(t)})
	must(t, err)
	defer sv.Close()
	st, err := sqlitestore.Open(ctx, filepath.Join(dir, "d.db"), sqlitestore.Options{Serde: testkeys.Encrypting(t)})
	must(t, err)
	defer st.Close()
	s, m := audit.NewSaver(sv, tr, nil), audit.NewStore(st, tr, nil)

	cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(0), ChannelValues: map[string]any{"x": "the diagnosis"}, ChannelVersions: map[string]string{"x": s.NextVersion("")}}
	cfg, err := s.Put(ctx, checkpointer.Config{ThreadID: "t1"}, cp, nil, cp.ChannelVersions)
	must(t, err)
	must(t, s.PutWrites(ctx, cfg, []checkpointer.Write{{Channel: "x", Value: "w"}}, "task", ""))
	_, err = s.GetTuple(ctx, checkpointer.Config{ThreadID: "t1"})
	must(t, err)
	for range s.List(ctx, &checkpointer.Config{ThreadID: "t1"}, checkpointer.ListOptions{}) {
	}
	must(t, m.Put(ctx, store.Namespace{"users", "carol"}, "diet", map[string]any{"v": "the allergy"}))
	_, err = m.Get(ctx, store.Namespace{"users", "carol"}, "diet")
	must(t, err)
	_, err = m.Search(ctx, store.Namespace{"users"}, store.SearchOptions{})
	must(t, err)
	_, err = m.Batch(ctx, []store.Op{store.GetOp{Namespace: store.Namespace{"users", "carol"}, Key: "diet"}, store.PutOp{Namespace: store.Namespace{"users", "carol"}, Key: "diet"}})
	must(t, err)
	must(t, s.DeleteThread(ctx, "t1"))
	keep1 := checkpointer.RetentionPolicy{KeepLatest: 1}
	// The SQLite saver is a Sweeper, so the audited one is.
	sw := s.(checkpointer.Sweeper)
	_, err = sw.Sweep(ctx, keep1, checkpointer.SweepOptions{DryRun: true}) // deletes nothing: not recorded
	must(t, err)
	_, err = sw.Sweep(ctx, keep1, checkpointer.SweepOptions{})
	must(t, err)

	var ops []string
	must(t, tr.Records(ctx, audit.Filter{}, func(r audit.Record) error {
		if r.Principal != "dr.smith" {
			t.Fatalf("principal %q", r.Principal)
		}
		ops = append(ops, r.Op+" "+r.Target)
		return nil
	}))
	want := []string{"checkpoint.write t1", "writes.write t1", "checkpoint.read t1", "checkpoint.read t1",
		"item.write users.carol/diet", "item.read users.carol/diet", "item.search users",
		"item.read users.carol/diet", "item.delete users.carol/diet", "thread.delete t1",
		"thread.delete retention:keep the latest 1 checkpoints per namespace"}
	if fmt.Sprint(ops) != fmt.Sprint(want) {
		t.Fatalf("recorded\n%v\nwant\n%v", ops, want)
	}
	if n, err := tr.Verify(ctx); err != nil || n != int64(len(want)) {
		t.Fatalf("verify: %d, %v", n, err)
	}
	tb.Tamper(func(rs []audit.Record) []audit.Record {
		for _, r := range rs {
			if bytes.Contains([]byte(fmt.Sprint(r)), []byte("diagnosis")) || bytes.Contains([]byte(fmt.Sprint(r)), []byte("allergy")) {
				t.Fatalf("a value reached the trail: %+v", r)
			}
		}
		return rs
	})
}

// BenchmarkAudit compares a checkpoint put and get on encrypted SQLite,
// plain and audited (the trail in a SQLite file of its own), in one run.
func BenchmarkAudit(b *testing.B) {
	ctx := context.Background()
	for _, audited := range []bool{false, true} {
		name := "plain"
		if audited {
			name = "audited"
		}
		b.Run(name, func(b *testing.B) {
			dir := b.TempDir()
			sv, err := sqlitesaver.Open(ctx, filepath.Join(dir, "d.db"), sqlitesaver.Options{Serde: testkeys.Encrypting(b)})
			must(b, err)
			defer sv.Close()
			var s checkpointer.Saver = sv
			if audited {
				tb, err := sqliteaudit.Open(ctx, filepath.Join(dir, "audit.db"))
				must(b, err)
				defer tb.Close()
				s = audit.NewSaver(sv, trail(b, tb), nil)
			}
			msg := bytes.Repeat([]byte("x"), 500)
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(i), ChannelValues: map[string]any{"messages": string(msg)}, ChannelVersions: map[string]string{"messages": fmt.Sprint(i + 1)}}
				if _, err := s.Put(ctx, checkpointer.Config{ThreadID: "bench"}, cp, nil, cp.ChannelVersions); err != nil {
					b.Fatal(err)
				}
				if _, err := s.GetTuple(ctx, checkpointer.Config{ThreadID: "bench"}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// lastOnly is a Table that keeps only its last record: the cost of a
// table, without a database's or a growing slice's.
type lastOnly struct{ last *audit.Record }

func (l *lastOnly) Append(_ context.Context, chain func(*audit.Record) ([]audit.Record, error)) error {
	rs, err := chain(l.last)
	if err == nil && len(rs) > 0 {
		l.last = &rs[len(rs)-1]
	}
	return err
}

func (l *lastOnly) Page(context.Context, int64, int) ([]audit.Record, error) { return nil, nil }

// BenchmarkAuditLogMemory is the trail's own cost per record (the chain's
// hash and MAC, the principal check), without a database's.
func BenchmarkAuditLogMemory(b *testing.B) {
	ctx := audit.WithPrincipal(context.Background(), "dr.smith")
	tr := trail(b, &lastOnly{})
	for b.Loop() {
		if err := tr.Log(ctx, audit.OpCheckpointRead, "carol:visit-1", "carol", "00aa11bb22cc33dd"); err != nil {
			b.Fatal(err)
		}
	}
}

// TestEntryTextChecked: an entry holding a NUL byte or invalid UTF-8 is
// refused with ErrInvalidEntry before it joins a commit, and a target over
// MaxTargetBytes is kept as its first bytes, its length and its SHA-256,
// on every table.
func TestEntryTextChecked(t *testing.T) {
	ctx := t.Context()
	for name, tb := range tables(t) {
		t.Run(name, func(t *testing.T) {
			tr := trail(t, tb)
			for _, e := range []audit.Entry{{Op: "item.read", Target: "a\x00b"}, {Op: "item.read", Target: "a\xffb"}, {Op: "item.read", Target: "t", Subject: "s\x00"}} {
				if err := tr.LogAll(ctx, []audit.Entry{e}); !errors.Is(err, audit.ErrInvalidEntry) {
					t.Errorf("LogAll(%q) = %v, want audit.ErrInvalidEntry", e, err)
				}
			}
			huge := strings.Repeat("é", 4<<20) // 8 MiB, two bytes a rune
			must(t, tr.Log(ctx, "item.read", huge, "", ""))
			var got []string
			must(t, tr.Records(ctx, audit.Filter{}, func(r audit.Record) error { got = append(got, r.Target); return nil }))
			if len(got) != 1 {
				t.Fatalf("%d records, want 1", len(got))
			}
			if len(got[0]) > audit.MaxTargetBytes || !strings.HasPrefix(got[0], strings.Repeat("é", 128)) || !strings.Contains(got[0], "8388608 bytes, sha256 ") {
				t.Errorf("a huge target was recorded as %d bytes: %.300q", len(got[0]), got[0])
			}
			if _, err := tr.Verify(ctx); err != nil {
				t.Fatal(err)
			}
		})
	}
}
