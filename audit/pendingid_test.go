package audit_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"testing"

	"github.com/memvault/memvault/audit"
)

// TestTrailBeforePendingIDs: a trail written by the build before records
// kept their pending ids (testdata/trail-before-pending-ids.json: a direct
// append, then a put's and a read's records chained from pending records,
// none naming its pending id) still verifies and is extended, and none of
// its records can be made to name a pending id (sqliteaudit's
// TestTrailBeforePendingIDs chains pending records after it).
func TestTrailBeforePendingIDs(t *testing.T) {
	b, err := os.ReadFile("testdata/trail-before-pending-ids.json")
	if err != nil {
		t.Fatal(err)
	}
	var old []audit.Record
	if err := json.Unmarshal(b, &old); err != nil {
		t.Fatal(err)
	}
	tb := audit.NewMemoryTable()
	tb.Tamper(func([]audit.Record) []audit.Record { return old })
	tr, err := audit.NewTrail(tb, audit.Options{Key: []byte("memvault-golden-trail-key-of-32-bytes+"), DatabaseID: "golden-db"})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if n, err := tr.Verify(ctx); err != nil || n != 3 {
		t.Fatalf("Verify of the earlier build's trail = %d, %v; want 3, nil", n, err)
	}
	if err := tr.Log(ctx, audit.OpThreadDelete, "after", "", ""); err != nil {
		t.Fatal(err)
	}
	if n, err := tr.Verify(ctx); err != nil || n != 4 {
		t.Fatalf("Verify = %d, %v; want 4, nil", n, err)
	}
	tb.Tamper(func(rs []audit.Record) []audit.Record {
		rs[1].PendingID = "00112233445566778899aabbccddeeff"
		return rs
	})
	if _, err := tr.Verify(ctx); !errors.Is(err, audit.ErrTampered) {
		t.Fatalf("Verify with a pending id added to an earlier build's record = %v, want ErrTampered", err)
	}
}
