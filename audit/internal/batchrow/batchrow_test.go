package batchrow

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/memvault/memvault/audit"
)

func batch(n int, id string) []audit.Record {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	rs := make([]audit.Record, n)
	for i := range rs {
		rs[i] = audit.Record{Seq: int64(10 + i), Time: at, Principal: "p", Op: "op", Target: fmt.Sprint("t", i), Link: "l", MAC: "m", PendingID: audit.MemberID(id, i)}
	}
	return rs
}

// TestSplitExpand: a batch's records are one row and come back as given;
// records naming other ids, the same id twice, or out of sequence are
// rows of their own.
func TestSplitExpand(t *testing.T) {
	rs := append(batch(3, "a"), audit.Record{Seq: 13, Op: "direct"})
	rs = append(rs, batch(1, "b")...)
	rs[4].Seq = 14
	twice := batch(2, "c")
	twice[1].PendingID = "c"
	twice[0].Seq, twice[1].Seq = 15, 16
	rs = append(rs, twice...)
	rows := Split(rs)
	if sizes := fmt.Sprint(len(rows[0]), len(rows[1]), len(rows[2]), len(rows[3]), len(rows[4]), len(rows)); sizes != "3 1 1 1 1 5" {
		t.Fatalf("row sizes %s", sizes)
	}
	last := rows[0][2]
	last.PendingID = rows[0][0].PendingID // the row's pending_id column
	got, err := Expand(last, More(rows[0]))
	if err != nil || !reflect.DeepEqual(got, rs[:3]) {
		t.Fatalf("Expand = %+v, %v; want %+v", got, err, rs[:3])
	}
}

// TestExpandRefuses: a row whose batch was tampered with reads as
// audit.ErrTampered, never as other records.
func TestExpandRefuses(t *testing.T) {
	rows := Split(batch(3, "a"))
	last := rows[0][2]
	last.PendingID = "a"
	many := "[" + strings.Repeat(`["2026-01-02T03:04:05Z","","","","","","",""],`, MaxRecords) + `["2026-01-02T03:04:05Z","","","","","","",""]]`
	for name, more := range map[string]string{
		"not JSON":     "[[",
		"empty":        "[]",
		"short member": `[["2026-01-02T03:04:05Z"]]`,
		"bad time":     `[["yesterday","","","","","","",""]]`,
		"too many":     many,
	} {
		if _, err := Expand(last, more); !errors.Is(err, audit.ErrTampered) {
			t.Errorf("%s: Expand = %v, want ErrTampered", name, err)
		}
	}
	low := last
	low.Seq = 2
	if _, err := Expand(low, More(rows[0])); !errors.Is(err, audit.ErrTampered) {
		t.Errorf("sequence numbers below 1: Expand = %v, want ErrTampered", err)
	}
	p := audit.Pending{ID: "a"}
	ExpandPending(&p, "[[")
	if len(p.More) != 1 || p.More[0].Op != "malformed batch" {
		t.Errorf("a malformed pending batch reads as %+v", p.More)
	}
}
