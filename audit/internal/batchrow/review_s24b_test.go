package batchrow

import (
	"errors"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/memvault/memvault/audit"
)

// TestReviewS24bHugeMoreRefusedBeforeDecoding (session 24 review, second
// pass): Expand (every Page of the trail: verify, show, export, Records)
// and ExpandPending decode a row's whole more column into [][]string
// before they count its records against MaxRecords. A row edited to hold
// a million empty members ("[[],[],…]", 3 MB) is refused as tampered —
// after ~150 MB allocated for the 3 MB row (~50 bytes per byte stored):
// a 100 MB row costs every reader of the trail ~5 GB (OOM).
// The count is known after MaxRecords members; the rest need not be
// decoded.
func TestReviewS24bHugeMoreRefusedBeforeDecoding(t *testing.T) {
	const members = 1_000_000
	more := "[" + strings.Repeat("[],", members-1) + "[]]"
	last := audit.Record{Seq: members + 10, Time: time.Now(), PendingID: "p"}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, err := Expand(last, more)
	runtime.ReadMemStats(&after)
	if !errors.Is(err, audit.ErrTampered) {
		t.Fatalf("Expand of %d members: %v, want ErrTampered", members, err)
	}
	allocated := after.TotalAlloc - before.TotalAlloc
	var pbefore, pafter runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&pbefore)
	p := audit.Pending{ID: "p"}
	ExpandPending(&p, more)
	runtime.ReadMemStats(&pafter)
	pending := pafter.TotalAlloc - pbefore.TotalAlloc
	if limit := uint64(len(more)); allocated > limit || pending > limit {
		t.Fatalf("a %d-byte more column of %d members (MaxRecords %d): Expand allocated %d bytes, ExpandPending %d, before refusing it",
			len(more), members, MaxRecords, allocated, pending)
	}
}
