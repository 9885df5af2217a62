package sqliteaudit_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"

	"github.com/memvault/memvault/audit"
	"github.com/memvault/memvault/audit/audittest"
	"github.com/memvault/memvault/audit/sqliteaudit"
	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/checkpointer/sqlitesaver"
	"github.com/memvault/memvault/internal/sqlitedb"
)

// s29Env is a sqlitesaver and a trail (WritesInTx, with the data file's
// chain mark: sqliteaudit.Meta) in one file.
type s29Env struct {
	path  string
	inner checkpointer.Saver
	tb    *sqliteaudit.Table
	dbID  string
}

func s29Open(t *testing.T) *s29Env {
	t.Helper()
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "s29.db")
	inner, err := sqlitesaver.Open(ctx, path, sqlitesaver.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { inner.Close() })
	tb, err := sqliteaudit.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tb.Close() })
	id, err := sqliteaudit.DatabaseID(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	return &s29Env{path: path, inner: inner, tb: tb, dbID: id}
}

// trail is a trail of e's table as one process has it.
func (e *s29Env) trail(t *testing.T) (*audit.Trail, checkpointer.Saver) {
	t.Helper()
	tr, err := audit.NewTrail(e.tb, audit.Options{Key: audittest.InTxKey, DatabaseID: e.dbID, Meta: sqliteaudit.Meta(e.path), WritesInTx: true})
	if err != nil {
		t.Fatal(err)
	}
	return tr, audit.NewSaver(e.inner, tr, nil)
}

func (e *s29Env) exec(t *testing.T, stmt string) {
	t.Helper()
	db, err := sqlitedb.Open(e.path, sqlitedb.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Write(context.Background(), func(tx *sql.Tx) error {
		_, err := tx.Exec(stmt)
		return err
	}); err != nil {
		t.Fatal(err)
	}
}

func (e *s29Env) rows(t *testing.T) int {
	t.Helper()
	db, err := sqlitedb.Open(e.path, sqlitedb.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	if err := db.Read(context.Background(), func(tx *sql.Tx) error {
		return tx.QueryRow(`SELECT count(*) FROM memvault_audit`).Scan(&n)
	}); err != nil {
		t.Fatal(err)
	}
	return n
}

func s29Checkpoint(n int) *checkpointer.Checkpoint {
	return &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(n),
		ChannelValues: map[string]any{"a": "v"}, ChannelVersions: map[string]string{"a": "1"}}
}

// s29Head puts a checkpoint through s and chains it, then reads it once:
// tr knows its head, and its next read alone in flight chains its own
// record.
func s29Head(t *testing.T, tr *audit.Trail, s checkpointer.Saver, thread string) checkpointer.Config {
	t.Helper()
	ctx := context.Background()
	cfg, err := s.Put(ctx, checkpointer.Config{ThreadID: thread}, s29Checkpoint(1), checkpointer.Metadata{}, map[string]string{"a": "1"})
	if err != nil {
		t.Fatal(err)
	}
	if err := tr.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := s.GetTuple(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	if err := tr.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	return cfg
}

// TestS29WipedTrailNotExtendedByRead: see the pgaudit test of that name —
// a wiped trail is extended by no writer, a read chaining its own record
// included.
func TestS29WipedTrailNotExtendedByRead(t *testing.T) {
	e := s29Open(t)
	ctx := context.Background()
	tr, s := e.trail(t)
	cfg := s29Head(t, tr, s, "wipe")
	e.exec(t, `DELETE FROM memvault_audit`)
	_, readErr := s.GetTuple(ctx, cfg)
	if n := e.rows(t); n != 0 {
		t.Fatalf("a read after the trail was wiped (read error %v) stored %d chained rows in the empty trail: the wiped trail is extended", readErr, n)
	}
	if _, err := s.Put(ctx, cfg, s29Checkpoint(2), checkpointer.Metadata{}, map[string]string{"a": "2"}); err == nil {
		_ = tr.Flush(ctx)
	}
	if n := e.rows(t); n != 0 {
		t.Fatalf("after a wipe, %d rows were chained", n)
	}
}

// TestS29RestoredTrailNoGap: see the pgaudit test of that name — a trail
// cut back behind the head this process knows gets no gap from its read.
func TestS29RestoredTrailNoGap(t *testing.T) {
	e := s29Open(t)
	ctx := context.Background()
	tr, s := e.trail(t)
	cfg := s29Head(t, tr, s, "restore")
	e.exec(t, `DELETE FROM memvault_audit WHERE seq = (SELECT max(seq) FROM memvault_audit)`)
	if _, err := s.GetTuple(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	if err := tr.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := tr.Verify(ctx); err != nil {
		t.Fatalf("after the trail was cut back by one record, a lone read chained its record: Verify = %v", err)
	}
}

// TestS29RestoredTrailNoFork: see the pgaudit test of that name — the
// head's sequence number taken again by another process's record: the
// read does not link after the record that is gone.
func TestS29RestoredTrailNoFork(t *testing.T) {
	e := s29Open(t)
	ctx := context.Background()
	tr, s := e.trail(t)
	cfg := s29Head(t, tr, s, "fork")
	e.exec(t, `DELETE FROM memvault_audit WHERE seq = (SELECT max(seq) FROM memvault_audit)`)
	tr2, s2 := e.trail(t)
	if _, err := s2.Put(ctx, checkpointer.Config{ThreadID: "other"}, s29Checkpoint(1), checkpointer.Metadata{}, map[string]string{"a": "1"}); err != nil {
		t.Fatal(err)
	}
	if err := tr2.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := s.GetTuple(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	listed := 0
	for tp, err := range s.List(ctx, &checkpointer.Config{ThreadID: "fork"}, checkpointer.ListOptions{Limit: 5}) {
		if err != nil {
			t.Fatal(err)
		}
		if tp != nil {
			listed++
		}
	}
	if listed != 1 {
		t.Fatalf("List yielded %d tuples, want 1", listed)
	}
	if err := tr.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := tr.Verify(ctx); err != nil {
		t.Fatalf("a lone read chained its record after a head another process replaced: Verify = %v", err)
	}
}
