package audit_test

import (
	"context"
	"errors"
	"reflect"
	"testing"

	"github.com/memvault/memvault/audit"
)

// countingTable counts the reads of the trail's table.
type countingTable struct {
	*audit.MemoryTable
	firstPages int
}

func (c *countingTable) Page(ctx context.Context, after int64, limit int) ([]audit.Record, error) {
	if after == 0 {
		c.firstPages++
	}
	return c.MemoryTable.Page(ctx, after, limit)
}

// TestCheckRecords: CheckRecords reports what Check reports and hands over
// what Records does, from one read of the table; on a tampered trail it
// still hands over every record and returns ErrTampered.
func TestCheckRecords(t *testing.T) {
	ctx := context.Background()
	tb := &countingTable{MemoryTable: audit.NewMemoryTable()}
	tr := trail(t, tb)
	fill(t, tr, 8)
	f := audit.Filter{Subject: "carol"}
	var want []audit.Record
	must(t, tr.Records(ctx, f, func(r audit.Record) error { want = append(want, r); return nil }))
	wantRep, err := tr.Check(ctx, nil)
	must(t, err)

	tb.firstPages = 0
	var got []audit.Record
	rep, err := tr.CheckRecords(ctx, nil, f, func(r audit.Record) error { got = append(got, r); return nil })
	must(t, err)
	if rep != wantRep || !reflect.DeepEqual(got, want) {
		t.Errorf("CheckRecords: %+v, %d records; want %+v, %d records", rep, len(got), wantRep, len(want))
	}
	if tb.firstPages != 1 {
		t.Errorf("CheckRecords read the trail %d times, want once", tb.firstPages)
	}

	stop := errors.New("stop")
	if _, err := tr.CheckRecords(ctx, nil, audit.Filter{}, func(audit.Record) error { return stop }); err != stop {
		t.Errorf("fn's error: got %v, want it as it is", err)
	}

	tb.Tamper(func(rs []audit.Record) []audit.Record { rs[2].Principal = "nobody"; return rs })
	n := 0
	rep, err = tr.CheckRecords(ctx, nil, audit.Filter{}, func(audit.Record) error { n++; return nil })
	if !errors.Is(err, audit.ErrTampered) || n != 8 || rep.Records != 2 {
		t.Errorf("tampered trail: %v, %d records handed over, %d checked; want ErrTampered, 8, 2", err, n, rep.Records)
	}
}
