package audittest

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/memvault/memvault/audit"
	"github.com/memvault/memvault/checkpointer"
)

// PendingBackend is a table that keeps pending records
// (audit.PendingTable) and the storage hooks RunPending needs: what
// whoever can write the trail's database can do to its rows.
type PendingBackend struct {
	// Backend is the table (an audit.PendingTable), fresh and empty, and
	// its Put, which must store each record's PendingID too.
	Backend
	// InsertRow inserts row, a write's pending record
	// (audit.Trail.RecordInTx), in a transaction of its own, as the
	// write's transaction would.
	InsertRow func(t *testing.T, row *checkpointer.RecordRow)
	// DeletePending deletes the pending row with id through the storage.
	DeletePending func(t *testing.T, id string)
}

// clock is a settable clock for audit.Options.Now.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// pendingTrail is a trail of b recording writes in their transactions,
// timed by c (nil: the system clock).
func pendingTrail(t *testing.T, b PendingBackend, c *clock) *audit.Trail {
	t.Helper()
	opts := audit.Options{Key: InTxKey, DatabaseID: dbID, WritesInTx: true, Meta: &audit.MemoryMeta{}}
	if c != nil {
		opts.Now = c.Now
	}
	tr, err := audit.NewTrail(b.Table, opts)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// pendingWrite stores a write's pending record of target through b, as
// an audited write's transaction would (without telling tr, whose
// chainer therefore leaves it pending until Flush), and returns it as the
// table reads it.
func pendingWrite(t *testing.T, b PendingBackend, tr *audit.Trail, target string) audit.Pending {
	t.Helper()
	ctx := audit.WithPrincipal(context.Background(), "writer")
	row, ok, err := tr.RecordInTx(ctx, audit.Entry{Op: audit.OpCheckpointWrite, Target: target})
	if err != nil || !ok {
		t.Fatalf("RecordInTx = %v, %v", ok, err)
	}
	b.InsertRow(t, row)
	for _, p := range allPending(t, b) {
		if p.Target == target {
			return p
		}
	}
	t.Fatalf("the pending record of %s is not in the table", target)
	return audit.Pending{}
}

// allPending is every pending row, read through PagePending (as whoever
// can read the table could).
func allPending(t *testing.T, b PendingBackend) []audit.Pending {
	t.Helper()
	ps, err := b.Table.(audit.PendingTable).PagePending(context.Background(), time.Time{}, "", 1000)
	if err != nil {
		t.Fatal(err)
	}
	return ps
}

// chained counts the chained records of target.
func chained(t *testing.T, b PendingBackend, target string) int {
	t.Helper()
	n := 0
	for _, r := range Records(t, b.Backend) {
		if r.Target == target {
			n++
		}
	}
	return n
}

// RunPending checks that pending records are chained once only, and what
// tampering with them shows: a pending row copied and inserted again once
// it was chained (replay) is refused by the chainer and fails Check with
// audit.ErrTampered, and is never chained twice; one deleted and inserted
// later (withheld) is counted late by Check (audit.Report.Late); the
// pending id a chained record commits to cannot be edited. open is called
// for every case and must return a backend over an empty table.
func RunPending(t *testing.T, open func(t *testing.T) PendingBackend) {
	t.Run("chained records name their pending ids", func(t *testing.T) {
		b := open(t)
		tr := pendingTrail(t, b, nil)
		ctx := context.Background()
		p := pendingWrite(t, b, tr, "w")
		if p.Chained != 0 {
			t.Fatalf("a pending record not chained yet reads as chained as record %d", p.Chained)
		}
		if err := tr.Log(ctx, audit.OpThreadDelete, "direct", "", ""); err != nil {
			t.Fatal(err)
		}
		rs := Records(t, b.Backend)
		if len(rs) != 2 || rs[0].Target != "w" || rs[0].PendingID != p.ID || rs[1].Target != "direct" || rs[1].PendingID != "" {
			t.Fatalf("records %+v; want the pending record's, naming %s, then the direct one's, naming none", rs, p.ID)
		}
		verified(t, tr, 2)
		// Whoever can write the table cannot move the id to another
		// record, nor remove it: the link covers it.
		for name, edit := range map[string]func([]audit.Record) []audit.Record{
			"removed": func(rs []audit.Record) []audit.Record { rs[0].PendingID = ""; return rs },
			"edited": func(rs []audit.Record) []audit.Record {
				rs[0].PendingID = "0123456789abcdef0123456789abcdef"
				return rs
			},
			"moved": func(rs []audit.Record) []audit.Record {
				rs[0].PendingID, rs[1].PendingID = "", rs[0].PendingID
				return rs
			},
		} {
			saved := Records(t, b.Backend)
			Tamper(t, b.Backend, edit)
			if _, err := tr.Verify(ctx); !errors.Is(err, audit.ErrTampered) {
				t.Fatalf("pending id %s: Verify = %v, want ErrTampered", name, err)
			}
			b.Put(t, saved)
		}
		verified(t, tr, 2)
	})
	t.Run("a pending id is stored once", func(t *testing.T) {
		// The table's own barrier (a unique index), whatever the chainer
		// checked: a transaction storing a pending id twice fails whole.
		b := open(t)
		id := "00112233445566778899aabbccddeeff"
		err := b.Table.Append(context.Background(), func(last *audit.Record) ([]audit.Record, error) {
			r := audit.Record{Seq: 1, Time: time.Now().UTC().Truncate(time.Microsecond), Op: "x", Link: strings.Repeat("0", 64), MAC: "m", PendingID: id}
			r2 := r
			r2.Seq = 2
			return []audit.Record{r, r2}, nil
		})
		if err == nil {
			t.Fatal("the table stored two records of one pending id")
		}
		if rs := Records(t, b.Backend); len(rs) != 0 {
			t.Fatalf("the failed transaction left %d records", len(rs))
		}
	})
	t.Run("a batch is read back record by record", func(t *testing.T) {
		// Records naming one pending row's member ids (audit.MemberID)
		// may share a row of the table: Page still returns each as it
		// was given, and pages cut through such a row.
		b := open(t)
		id := "00112233445566778899aabbccddeeff"
		at := time.Date(2026, 1, 2, 3, 4, 5, 6000, time.UTC)
		var want []audit.Record
		for i := range 5 {
			r := audit.Record{Seq: int64(i + 1), Time: at.Add(time.Duration(i) * time.Microsecond), Principal: fmt.Sprint("p", i), Op: audit.OpCheckpointRead,
				Target: fmt.Sprintf("t\"%d],[", i), Subject: "s", KeyID: "k", Link: strings.Repeat(fmt.Sprint(i), 64), MAC: fmt.Sprint("m", i)}
			if i < 4 {
				r.PendingID = audit.MemberID(id, i)
			}
			want = append(want, r)
		}
		if err := b.Table.Append(context.Background(), func(*audit.Record) ([]audit.Record, error) { return want, nil }); err != nil {
			t.Fatal(err)
		}
		if got := Records(t, b.Backend); !reflect.DeepEqual(got, want) {
			t.Fatalf("records\n%+v\nwant\n%+v", got, want)
		}
		for after := range int64(5) {
			for limit := 1; limit <= 6; limit++ {
				got, err := b.Table.Page(context.Background(), after, limit)
				if err != nil {
					t.Fatal(err)
				}
				end := min(int(after)+limit, len(want))
				if !reflect.DeepEqual(got, want[after:end]) {
					t.Fatalf("Page(%d, %d) = %+v, want %+v", after, limit, got, want[after:end])
				}
			}
		}
		// The batch's first pending id is the row's: it is stored once.
		err := b.Table.Append(context.Background(), func(last *audit.Record) ([]audit.Record, error) {
			r := want[0]
			r.Seq = last.Seq + 1
			return []audit.Record{r}, nil
		})
		if err == nil {
			t.Fatal("the table stored a pending id its batch row holds already")
		}
	})
	t.Run("replay", func(t *testing.T) {
		b := open(t)
		tr := pendingTrail(t, b, nil)
		ctx := context.Background()
		p := pendingWrite(t, b, tr, "replayed")
		if err := tr.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		if rep, err := tr.Check(ctx, nil); err != nil || rep.Records != 1 || rep.Pending != 0 {
			t.Fatalf("Check = %+v, %v; want 1 record, none pending", rep, err)
		}
		// The copy, inserted again once its original was chained.
		if err := b.Table.(audit.PendingTable).AddPending(ctx, []audit.Pending{p}); err != nil {
			t.Fatal(err)
		}
		if got := allPending(t, b); len(got) != 1 || got[0].Chained != 1 {
			t.Fatalf("the copy reads as %+v; want it chained as record 1", got)
		}
		if rep, err := tr.Check(ctx, nil); !errors.Is(err, audit.ErrTampered) {
			t.Fatalf("Check with a replayed pending record = %+v, %v; want ErrTampered", rep, err)
		}
		// The viewer's check (the inspector's) says the same: it
		// reported this trail verified.
		if rep, err := tr.CheckRecords(ctx, nil, audit.Filter{}, func(audit.Record) error { return nil }); !errors.Is(err, audit.ErrTampered) {
			t.Fatalf("CheckRecords with a replayed pending record = %+v, %v; want ErrTampered", rep, err)
		}
		if err := tr.Flush(ctx); !errors.Is(err, audit.ErrTampered) {
			t.Fatalf("chaining a replayed pending record = %v, want ErrTampered", err)
		}
		// Fail closed: no record is made while the chainer refuses.
		if _, _, err := tr.RecordInTx(audit.WithPrincipal(ctx, "writer"), audit.Entry{Op: audit.OpCheckpointWrite, Target: "after"}); !errors.Is(err, audit.ErrTampered) {
			t.Fatalf("a record after the chainer refused the trail = %v, want ErrTampered", err)
		}
		if err := tr.Log(ctx, audit.OpThreadDelete, "after", "", ""); !errors.Is(err, audit.ErrTampered) {
			t.Fatalf("an append after the chainer refused the trail = %v, want ErrTampered", err)
		}
		if n := chained(t, b, "replayed"); n != 1 {
			t.Fatalf("the replayed operation is chained %d times, want once", n)
		}
		// Removed once looked into, the trail goes on.
		b.DeletePending(t, p.ID)
		if err := tr.Log(ctx, audit.OpThreadDelete, "after", "", ""); err != nil {
			t.Fatal(err)
		}
		verified(t, tr, 2)
	})
	t.Run("replay by another process", func(t *testing.T) {
		// The trail that chains the copy never saw the original: the
		// check is the table's, not a process's memory.
		b := open(t)
		ctx := context.Background()
		p := pendingWrite(t, b, pendingTrail(t, b, nil), "replayed")
		if err := pendingTrail(t, b, nil).Flush(ctx); err != nil {
			t.Fatal(err)
		}
		if err := b.Table.(audit.PendingTable).AddPending(ctx, []audit.Pending{p}); err != nil {
			t.Fatal(err)
		}
		other := pendingTrail(t, b, nil)
		if err := other.Log(ctx, audit.OpThreadDelete, "x", "", ""); !errors.Is(err, audit.ErrTampered) {
			t.Fatalf("an append chaining a replayed pending record = %v, want ErrTampered", err)
		}
		if n := chained(t, b, "replayed"); n != 1 {
			t.Fatalf("the replayed operation is chained %d times, want once", n)
		}
	})
	t.Run("withheld", func(t *testing.T) {
		b := open(t)
		c := &clock{now: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
		tr := pendingTrail(t, b, c)
		ctx := context.Background()
		// A write's record, deleted before it is chained.
		p := pendingWrite(t, b, tr, "withheld")
		b.DeletePending(t, p.ID)
		// A slow write: its record is made a minute before the record
		// chained ahead of it, well within LateAfter.
		slow := pendingWrite(t, b, tr, "slow")
		b.DeletePending(t, slow.ID)
		c.add(time.Minute)
		if err := tr.Log(ctx, audit.OpThreadDelete, "meanwhile", "", ""); err != nil {
			t.Fatal(err)
		}
		if err := b.Table.(audit.PendingTable).AddPending(ctx, []audit.Pending{slow}); err != nil {
			t.Fatal(err)
		}
		if err := tr.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		if rep, err := tr.Check(ctx, nil); err != nil || rep.Records != 2 || rep.Late != 0 {
			t.Fatalf("Check after a slow write = %+v, %v; want 2 records, none late", rep, err)
		}
		// Records go on being chained; the withheld row comes back.
		c.add(audit.LateAfter)
		if err := tr.Log(ctx, audit.OpThreadDelete, "later", "", ""); err != nil {
			t.Fatal(err)
		}
		if err := b.Table.(audit.PendingTable).AddPending(ctx, []audit.Pending{p}); err != nil {
			t.Fatal(err)
		}
		if err := tr.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		rep, err := tr.Check(ctx, nil)
		if err != nil || rep.Records != 4 || rep.Late != 1 || rep.FirstLate != 4 {
			t.Fatalf("Check after a withheld pending record = %+v, %v; want 4 records, 1 late: record 4", rep, err)
		}
		viewed, err := tr.CheckRecords(ctx, nil, audit.Filter{}, func(audit.Record) error { return nil })
		if err != nil || viewed != rep {
			t.Fatalf("CheckRecords after a withheld pending record = %+v, %v; want Check's %+v", viewed, err, rep)
		}
	})
}
