package mongosaver_test

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/memvault/memvault/backends/mongodb/mongosaver"
	"github.com/memvault/memvault/backends/mongodb/mongotest"
	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/memvaulttest/childproc"
)

const (
	importThreads = 4  // the child imports threads imp-0 .. imp-3
	importDepth   = 12 // checkpoints per thread, each with a pending write
	killedThread  = 2  // killed while importing this one
)

// importItems is thread imp-k as an import: importDepth checkpoints, each
// continuing the previous one, each with a pending write.
func importItems(k int) []checkpointer.ImportCheckpoint {
	thread := fmt.Sprintf("imp-%d", k)
	var items []checkpointer.ImportCheckpoint
	parent := ""
	for i := range importDepth {
		v := strconv.Itoa(i + 1)
		id := checkpointer.NewID(i)
		items = append(items, checkpointer.ImportCheckpoint{ThreadID: thread, ID: id, ParentID: parent,
			Checkpoint: &checkpointer.Checkpoint{V: 4, ID: id, TS: time.Now(),
				ChannelValues: map[string]any{"step": i, "fixed": "kept"}, ChannelVersions: map[string]string{"step": v, "fixed": "1"}},
			Metadata: checkpointer.Metadata{"step": i}, NewVersions: map[string]string{"step": v},
			Writes: []checkpointer.ImportWrites{{TaskID: "t", Writes: []checkpointer.Write{{Channel: "step", Value: i}}}}})
		if i == 0 {
			items[0].NewVersions["fixed"] = "1"
		}
		parent = id
	}
	return items
}

// TestImportKilled kills (SIGKILL) a process in the middle of importing a
// thread — this test binary re-executed, stopped after half the thread's
// checkpoints are stored — and checks that, once the dead importer's lease
// has expired and Setup has run, every thread is complete or absent:
// the threads imported before are whole, the one being imported is gone.
// (Without the created mark and its recovery, the thread being imported
// stays half written.)
func TestImportKilled(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := mongotest.Database(t)
	child := startChild(t, "TestImportChild", db, childArg{})
	killed := false
	for l := range child.Lines {
		if l == "MID" {
			child.Kill()
			killed = true
			break
		}
	}
	_ = child.Wait()
	if !killed {
		t.Fatal("the child process ended without reaching the middle of its import")
	}

	// Wait for the dead importer's lease to expire (its LeaseTTL is
	// short), reading the expiry the lease records.
	var lease struct {
		Expires time.Time `bson:"expires"`
	}
	err := db.Collection("memvault_leases").FindOne(ctx, bson.D{{Key: "_id", Value: fmt.Sprintf("imp-%d", killedThread)}}).Decode(&lease)
	if err == nil {
		time.Sleep(time.Until(lease.Expires) + 100*time.Millisecond)
	}
	s, err := mongosaver.New(db, mongosaver.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Setup(ctx); err != nil {
		t.Fatal(err)
	}
	for k := range importThreads {
		thread := fmt.Sprintf("imp-%d", k)
		n, writes := 0, 0
		for tu, err := range s.List(ctx, &checkpointer.Config{ThreadID: thread}, checkpointer.ListOptions{}) {
			if err != nil {
				t.Fatal(err)
			}
			n++
			writes += len(tu.PendingWrites)
		}
		switch {
		case k < killedThread && (n != importDepth || writes != importDepth):
			t.Errorf("%s (imported before the kill): %d checkpoints, %d writes; want %d and %d", thread, n, writes, importDepth, importDepth)
		case k >= killedThread && (n != 0 || writes != 0):
			t.Errorf("%s (being imported at the kill, or after): %d checkpoints, %d writes; want it absent, not half imported", thread, n, writes)
		}
	}
}

// TestImportChild is the child process of TestImportKilled.
func TestImportChild(t *testing.T) {
	_, db, ok := childDatabase(t)
	if !ok {
		t.Skip("a child process of TestImportKilled")
	}
	ctx := context.Background()
	s, err := mongosaver.New(db, mongosaver.Options{LeaseTTL: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Setup(ctx); err != nil {
		t.Fatal(err)
	}
	importing, puts := -1, 0
	mongosaver.SetAfterPutRead(s, func() {
		if puts++; importing == killedThread && puts == importDepth/2 {
			childproc.Say("MID")
			time.Sleep(time.Hour) // killed here
		}
	})
	for k := range importThreads {
		importing, puts = k, 0
		if err := s.ImportThread(ctx, importItems(k)); err != nil {
			t.Fatal(err)
		}
		childproc.Say("DONE %d", k)
	}
}
