package mongosaver_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/memvault/memvault/backends/mongodb/mongosaver"
	"github.com/memvault/memvault/backends/mongodb/mongotest"
	"github.com/memvault/memvault/checkpointer"
	mvkeys "github.com/memvault/memvault/keys"
	"github.com/memvault/memvault/keys/keystest"
	"github.com/memvault/memvault/keys/sqlitekeys"
	"github.com/memvault/memvault/memvaulttest/childproc"
)

// threadSubjects is a process's key hierarchy over the key table in the
// SQLite file at path, a thread's subject the part of its id before "-".
func threadSubjects(t testing.TB, path string) *mvkeys.Hierarchy {
	t.Helper()
	table, err := sqlitekeys.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = table.Close() })
	return keystest.NewHierarchy(t, table, mvkeys.Subjects{ThreadSeparator: "-"})
}

// TestErasureAgainstAnotherProcess erases a data subject while a writer in
// another process (this test binary, re-executed) starts new threads of
// the subject in a loop, each put pausing between its check of the
// subject's key and its write. This process destroys the keys, drains the
// writes, lists the subject's threads and deletes them, as vault.Forget
// does; then, for a while, no checkpoint of the subject may appear. A put
// into a new thread holds that thread's lease only, which the deletion of
// the listed threads never asks for: unless the draining waits for every
// lease held when it began, the paused put stores a thread sealed under
// the destroyed key after the listing.
func TestErasureAgainstAnotherProcess(t *testing.T) {
	ctx := context.Background()
	db := mongotest.Database(t)
	keysPath := filepath.Join(t.TempDir(), "keys.db")
	h := threadSubjects(t, keysPath)
	s, err := mongosaver.New(db, mongosaver.Options{Serde: h})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Setup(ctx); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(0), TS: time.Now(),
		ChannelValues: map[string]any{"notes": "allergic to peanuts"}, ChannelVersions: map[string]string{"notes": s.NextVersion("")}}
	if _, err := s.Put(ctx, checkpointer.Config{ThreadID: "carol-0"}, cp, nil, cp.ChannelVersions); err != nil {
		t.Fatal(err)
	}

	child := startChild(t, "TestErasureChild", db, childArg{Keys: keysPath})
	read, result := 0, ""
	for l := range child.Lines {
		switch {
		case l == "READ":
			if read++; read != 3 {
				continue
			}
			// The child's third put found carol's key live and
			// pauses before its write: erase carol now.
			if _, err := h.StartErasure(ctx, "carol"); err != nil {
				t.Fatal(err)
			}
			if err := s.DrainWrites(ctx); err != nil {
				t.Fatal(err)
			}
			var ids []string
			for th, err := range s.ListThreads(ctx) {
				if err != nil {
					t.Fatal(err)
				}
				if strings.HasPrefix(th.ThreadID, "carol-") {
					ids = append(ids, th.ThreadID)
				}
			}
			for _, id := range ids {
				if err := s.DeleteThread(ctx, id); err != nil {
					t.Fatal(err)
				}
			}
		case strings.HasPrefix(l, "DONE "):
			result = strings.TrimPrefix(l, "DONE ")
		}
	}
	if err := child.Wait(); err != nil {
		t.Fatalf("child process: %v", err)
	}
	if result != "erased" {
		t.Fatalf("the child's puts ended with %q, want a put refused as erased", result)
	}
	// The child has stopped; look a while longer all the same.
	for range 10 {
		var left []string
		for _, coll := range []string{"checkpoints", "checkpoint_writes"} {
			res := db.Collection(coll).Distinct(ctx, "thread_id", bson.D{{Key: "thread_id", Value: bson.D{{Key: "$gte", Value: "carol-"}, {Key: "$lt", Value: "carol."}}}})
			var ths []string
			if err := res.Decode(&ths); err != nil {
				t.Fatal(err)
			}
			left = append(left, ths...)
		}
		if len(left) > 0 {
			t.Fatalf("after the erasure, threads of the erased subject are stored (sealed under its destroyed key), written by the other process: %v", left)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestErasureChild is the child process of TestErasureAgainstAnotherProcess.
func TestErasureChild(t *testing.T) {
	arg, db, ok := childDatabase(t)
	if !ok {
		t.Skip("a child process of TestErasureAgainstAnotherProcess")
	}
	ctx := context.Background()
	s, err := mongosaver.New(db, mongosaver.Options{Serde: threadSubjects(t, arg.Keys)})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	mongosaver.SetAfterPutRead(s, func() {
		childproc.Say("READ")
		time.Sleep(300 * time.Millisecond)
	})
	for i := range 100 {
		cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(0), TS: time.Now(),
			ChannelValues: map[string]any{"notes": "allergic to peanuts"}, ChannelVersions: map[string]string{"notes": s.NextVersion("")}}
		_, err := s.Put(ctx, checkpointer.Config{ThreadID: fmt.Sprintf("carol-w%d", i)}, cp, nil, cp.ChannelVersions)
		switch {
		case errors.Is(err, mvkeys.ErrSubjectErased):
			childproc.Say("DONE erased")
			return
		case err != nil:
			childproc.Say("DONE error: %v", strings.ReplaceAll(err.Error(), "\n", " "))
			return
		}
	}
	childproc.Say("DONE never refused")
}
