package sqlitesaver

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/memvault/memvault/checkpointer"
)

// TestS29ReadRecordAfterNoRow: a read's audit record whose
// RecordRow.After yields no row (the record it must follow is gone)
// stores nothing: the read fails with checkpointer.ErrRecordNotStored and
// returns nothing — the insert is not silently skipped while the read
// goes on unrecorded. With a row, it is stored with the After values
// bound after the row's own.
func TestS29ReadRecordAfterNoRow(t *testing.T) {
	ctx := context.Background()
	s := openSaver(t, filepath.Join(t.TempDir(), "after.db"), Options{})
	cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(0), TS: time.Now().UTC(), ChannelValues: map[string]any{},
		ChannelVersions: map[string]string{}, VersionsSeen: map[string]map[string]string{}}
	cfg, err := s.Put(ctx, checkpointer.Config{ThreadID: "t"}, cp, checkpointer.Metadata{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.d.db.Writer().Exec(`CREATE TABLE s29_records (target TEXT NOT NULL); CREATE TABLE s29_heads (id INTEGER)`); err != nil {
		t.Fatal(err)
	}
	row := func(head int) *checkpointer.RecordRow {
		return &checkpointer.RecordRow{Table: "s29_records", Columns: []string{"target"}, Values: []any{"t"},
			After: func(param func(int) string) string {
				return `SELECT 1 WHERE EXISTS (SELECT 1 FROM s29_heads WHERE id = ` + param(0) + `)`
			},
			AfterValues: []any{head}}
	}
	count := func() (n int) {
		if err := s.d.db.Writer().QueryRow(`SELECT count(*) FROM s29_records`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	tp, err := s.GetTuple(checkpointer.WithReadRecord(ctx, row(7)), cfg)
	if !errors.Is(err, checkpointer.ErrRecordNotStored) || tp != nil {
		t.Fatalf("GetTuple whose record's After yields no row = %v, %v; want nothing and ErrRecordNotStored", tp, err)
	}
	for tp, err := range s.List(checkpointer.WithReadRecord(ctx, row(7)), &checkpointer.Config{ThreadID: "t"}, checkpointer.ListOptions{Limit: 5}) {
		if !errors.Is(err, checkpointer.ErrRecordNotStored) || tp != nil {
			t.Fatalf("List whose record's After yields no row yielded %v, %v", tp, err)
		}
	}
	if n := count(); n != 0 {
		t.Fatalf("%d records stored", n)
	}
	if _, err := s.d.db.Writer().Exec(`INSERT INTO s29_heads VALUES (7)`); err != nil {
		t.Fatal(err)
	}
	if tp, err := s.GetTuple(checkpointer.WithReadRecord(ctx, row(7)), cfg); err != nil || tp == nil {
		t.Fatalf("GetTuple = %v, %v", tp, err)
	}
	if n := count(); n != 1 {
		t.Fatalf("%d records stored, want 1", n)
	}
}
