package sqlitesaver

import (
	"bytes"
	"database/sql"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/checkpointer/threadfile"
)

// TestLegacyLongIDs: a database an earlier version wrote, before
// checkpointer.MaxIDBytes, may hold threads whose thread id and namespace
// are longer (SQLite had no limit). The limit bounds writes only, so such
// a thread is still read (GetTuple, List), exported, and deleted
// (DeleteCheckpoint, DeleteThread, Prune — what an erasure and a retention
// policy run), while a write to it is refused with ErrIDTooLong.
//
// The rows are planted as the earlier version stored them: a thread is
// written with short ids by this build, the database closed, and its id
// columns rewritten by SQL — the values are plaintext, so nothing in them
// binds the thread id — then the database is opened again.
func TestLegacyLongIDs(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "legacy.db")
	long := func(c string) string { return strings.Repeat(c, 2994) + "-ünï" } // 3000 bytes
	threadA, nsA, threadB := long("a"), long("n"), long("b")
	for _, id := range []string{threadA, nsA, threadB} {
		if len(id) != 3000 {
			t.Fatalf("test setup: %d bytes", len(id))
		}
	}

	s := openSaver(t, path, Options{})
	var ids []string
	for _, th := range []struct{ thread, ns string }{{"short-a", "ns-a"}, {"short-b", ""}} {
		cfg := checkpointer.Config{ThreadID: th.thread, CheckpointNS: th.ns}
		ver := ""
		for step := range 2 {
			ver = s.NextVersion(ver)
			cp := &checkpointer.Checkpoint{
				V: 4, ID: checkpointer.NewID(step), TS: time.Now().UTC(),
				ChannelValues:   map[string]any{"messages": []any{"step", step}},
				ChannelVersions: map[string]string{"messages": ver},
				VersionsSeen:    map[string]map[string]string{},
			}
			var err error
			if cfg, err = s.Put(ctx, cfg, cp, checkpointer.Metadata{"step": step}, map[string]string{"messages": ver}); err != nil {
				t.Fatal(err)
			}
			if th.thread == "short-a" {
				ids = append(ids, cfg.CheckpointID)
			}
		}
		if err := s.PutWrites(ctx, cfg, []checkpointer.Write{{Channel: "messages", Value: "pending"}}, "task-1", ""); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	for _, table := range []string{"checkpoints", "checkpoint_blobs", "checkpoint_writes"} {
		for _, u := range [][3]string{{"short-a", threadA, nsA}, {"short-b", threadB, ""}} {
			res, err := db.ExecContext(ctx, `UPDATE `+table+` SET thread_id = ?, checkpoint_ns = ? WHERE thread_id = ?`, u[1], u[2], u[0])
			if err != nil {
				t.Fatalf("plant %s: %v", table, err)
			}
			if n, _ := res.RowsAffected(); n == 0 {
				t.Fatalf("plant %s: no row of %s", table, u[0])
			}
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	s = openSaver(t, path, Options{})
	cfgA := checkpointer.Config{ThreadID: threadA, CheckpointNS: nsA}
	tp, err := s.GetTuple(ctx, cfgA)
	if err != nil || tp == nil {
		t.Fatalf("GetTuple(the legacy thread) = %v, %v; want its latest checkpoint", tp, err)
	}
	if tp.Config.CheckpointID != ids[1] || tp.Config.ThreadID != threadA || tp.Config.CheckpointNS != nsA {
		t.Fatalf("GetTuple gave checkpoint %s of a %d-byte thread, want %s of the 3000-byte one", tp.Config.CheckpointID, len(tp.Config.ThreadID), ids[1])
	}
	if len(tp.PendingWrites) != 1 || tp.PendingWrites[0].Value != "pending" {
		t.Fatalf("GetTuple's pending writes = %+v, want the one planted", tp.PendingWrites)
	}
	var listed []string
	for tp, err := range s.List(ctx, &cfgA, checkpointer.ListOptions{}) {
		if err != nil {
			t.Fatalf("List(the legacy thread): %v", err)
		}
		listed = append(listed, tp.Config.CheckpointID)
	}
	if len(listed) != 2 {
		t.Fatalf("List(the legacy thread) = %d checkpoints, want 2", len(listed))
	}
	var file bytes.Buffer
	if n, err := threadfile.Export(ctx, &file, s, threadA); err != nil || n != 2 {
		t.Fatalf("Export(the legacy thread) = %d, %v; want its 2 checkpoints", n, err)
	}

	// A write to it is refused: the limit bounds what is stored.
	next := *tp.Checkpoint
	next.ID = checkpointer.NewID(2)
	if _, err := s.Put(ctx, tp.Config, &next, nil, nil); !errors.Is(err, checkpointer.ErrIDTooLong) {
		t.Fatalf("Put on the legacy thread = %v, want ErrIDTooLong", err)
	}

	if err := s.DeleteCheckpoint(ctx, checkpointer.Config{ThreadID: threadA, CheckpointNS: nsA, CheckpointID: ids[1]}); err != nil {
		t.Fatalf("DeleteCheckpoint(the legacy thread's latest): %v", err)
	}
	if tp, err := s.GetTuple(ctx, cfgA); err != nil || tp == nil || tp.Config.CheckpointID != ids[0] {
		t.Fatalf("after DeleteCheckpoint GetTuple = %v, %v; want the first checkpoint", tp, err)
	}
	if err := s.DeleteThread(ctx, threadA); err != nil {
		t.Fatalf("DeleteThread(the legacy thread): %v", err)
	}
	if err := s.Prune(ctx, []string{threadB}, checkpointer.PruneDelete); err != nil {
		t.Fatalf("Prune(the other legacy thread): %v", err)
	}
	db, err = sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, table := range []string{"checkpoints", "checkpoint_blobs", "checkpoint_writes"} {
		var n int
		if err := db.QueryRowContext(ctx, `SELECT count(*) FROM `+table).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != 0 {
			t.Errorf("%s keeps %d rows of the deleted legacy threads", table, n)
		}
	}
}
