package audit_test

import (
	"context"
	"testing"

	"github.com/memvault/memvault/audit"
	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/checkpointer/memsaver"
)

// TestReviewS27bCheckRecordsSubjectListings: Filter.Subject now keeps the
// listings of every thread (checkpoint.read of "*", no subject) in
// Records (a8025a2), but CheckRecords, which takes the same Filter and
// says it hands over what Records does, still drops them.
// Before the fix: 'CheckRecords handed 1 records for carol, Records 2'.
func TestReviewS27bCheckRecordsSubjectListings(t *testing.T) {
	ctx := context.Background()
	tr := trail(t, audit.NewMemoryTable())
	must(t, tr.Log(ctx, audit.OpCheckpointRead, "*", "", ""))
	must(t, tr.Log(ctx, audit.OpCheckpointRead, "carol:visit", "carol", "00aa"))
	f := audit.Filter{Subject: "carol"}
	var viaRecords, viaCheck int
	must(t, tr.Records(ctx, f, func(audit.Record) error { viaRecords++; return nil }))
	if _, err := tr.CheckRecords(ctx, nil, f, func(audit.Record) error { viaCheck++; return nil }); err != nil {
		t.Fatal(err)
	}
	if viaCheck != viaRecords {
		t.Errorf("CheckRecords handed %d records for carol, Records %d", viaCheck, viaRecords)
	}
}

// TestReviewS27bThreadNamedStar: a thread may be named "*" (any text is a
// thread id); its read is recorded as {checkpoint.read, "*", no subject},
// the same record as a listing of every thread, so `audit show --subject
// carol` now lists reads of thread "*", which never returned carol's data.
// Before the fix: 'carol's records hold a read of the thread named "*"'.
func TestReviewS27bThreadNamedStar(t *testing.T) {
	ctx := context.Background()
	inner, err := memsaver.New(memsaver.Options{})
	must(t, err)
	tr := trail(t, audit.NewMemoryTable())
	s := audit.NewSaver(inner, tr, nil)
	if _, err := s.GetTuple(ctx, checkpointer.Config{ThreadID: "*"}); err != nil {
		t.Fatal(err)
	}
	must(t, tr.Records(ctx, audit.Filter{Subject: "carol"}, func(r audit.Record) error {
		t.Errorf("carol's records hold a read of the thread named %q: %+v", r.Target, r)
		return nil
	}))
}

// TestReviewS28ListingKeptWhateverItsSubject: session 27's version recorded
// a listing of every thread under the subject of a thread named "*" bound
// by ThreadMetadataKey; such a record is still a listing of every thread,
// kept for every subject by Records and CheckRecords alike.
func TestReviewS28ListingKeptWhateverItsSubject(t *testing.T) {
	ctx := context.Background()
	tr := trail(t, audit.NewMemoryTable())
	must(t, tr.Log(ctx, audit.OpCheckpointList, "*", "mallory", ""))
	f := audit.Filter{Subject: "carol"}
	var viaRecords, viaCheck int
	must(t, tr.Records(ctx, f, func(audit.Record) error { viaRecords++; return nil }))
	if _, err := tr.CheckRecords(ctx, nil, f, func(audit.Record) error { viaCheck++; return nil }); err != nil {
		t.Fatal(err)
	}
	if viaRecords != 1 || viaCheck != 1 {
		t.Errorf("a listing of every thread recorded under mallory: Records kept %d for carol, CheckRecords %d; want 1 and 1", viaRecords, viaCheck)
	}
}
