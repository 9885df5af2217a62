package batchrow_test

import (
	"errors"
	"fmt"
	"time"

	"github.com/memvault/memvault/audit"
	"github.com/memvault/memvault/audit/internal/batchrow"
)

// A table appending chained records splits them into rows with Split,
// stores each row's last record in its columns and the others as More;
// reading, Expand gives back the row's records, pending ids included.
func Example() {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	rec := func(seq int64, pending string) audit.Record {
		return audit.Record{Seq: seq, Time: at, Principal: "agent", Op: "store.get", Target: "users.carol/diet",
			Link: fmt.Sprintf("link%d", seq), MAC: fmt.Sprintf("k1:mac%d", seq), PendingID: pending}
	}
	// Three records chained from one pending row of three reads, then one
	// record appended directly.
	rs := []audit.Record{
		rec(5, "p1"), rec(6, audit.MemberID("p1", 1)), rec(7, audit.MemberID("p1", 2)),
		rec(8, ""),
	}
	rows := batchrow.Split(rs)
	for _, row := range rows {
		last := row[len(row)-1]
		fmt.Printf("row: seq %d, %d record(s) in more\n", last.Seq, len(row)-1)
	}

	// The first row as a table stores it: its first record's pending id in
	// pending_id, its last record's other fields in the columns.
	batch := rows[0]
	stored := batch[len(batch)-1]
	stored.PendingID = batch[0].PendingID
	back, err := batchrow.Expand(stored, batchrow.More(batch))
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, r := range back {
		fmt.Println(r.Seq, r.PendingID, r.Link, r == rs[r.Seq-5])
	}

	// A row whose batch was edited is refused as tampered.
	_, err = batchrow.Expand(stored, `[["not a time"]]`)
	fmt.Println(errors.Is(err, audit.ErrTampered))
	// Output:
	// row: seq 7, 2 record(s) in more
	// row: seq 8, 0 record(s) in more
	// 5 p1 link5 true
	// 6 p1.1 link6 true
	// 7 p1.2 link7 true
	// true
}
