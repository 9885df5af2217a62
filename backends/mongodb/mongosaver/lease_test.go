package mongosaver_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/memvault/memvault/backends/mongodb/mongosaver"
	"github.com/memvault/memvault/backends/mongodb/mongotest"
	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/memvaulttest/childproc"
)

// TestLeaseSerializesProcesses races a removal in this process with a put
// in another OS process (this test binary, re-executed): the child reads
// the parent checkpoint and pauses before its write; meanwhile this
// process deletes the thread. Without leases the delete runs in the pause
// and the child then stores a checkpoint continuing one that is gone —
// a put interleaved with a removal, the inherited values' source deleted
// under it. With leases the delete waits for the child's put and removes
// both: the thread is empty, and nothing stored continues a missing
// checkpoint.
func TestLeaseSerializesProcesses(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := mongotest.Database(t)
	s, err := mongosaver.New(db, mongosaver.Options{})
	if err != nil {
		t.Fatal(err)
	}
	const thread = "raced"
	v := s.NextVersion("")
	cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(0), TS: time.Now(),
		ChannelValues: map[string]any{"a": "one", "b": "kept"}, ChannelVersions: map[string]string{"a": v, "b": v}}
	parent, err := s.Put(ctx, checkpointer.Config{ThreadID: thread}, cp, checkpointer.Metadata{"step": 0}, cp.ChannelVersions)
	if err != nil {
		t.Fatal(err)
	}

	child := startChild(t, "TestLeaseChild", db, childArg{Thread: thread, Parent: parent.CheckpointID})
	result := ""
	read := false
	for l := range child.Lines {
		switch {
		case l == "READ":
			// The child has read the parent and pauses: remove the
			// thread now.
			read = true
			if err := s.DeleteThread(ctx, thread); err != nil {
				t.Errorf("DeleteThread: %v", err)
			}
		case strings.HasPrefix(l, "PUT "):
			result = strings.TrimPrefix(l, "PUT ")
		}
	}
	if err := child.Wait(); err != nil {
		t.Fatalf("child process: %v", err)
	}
	if !read || result == "" {
		t.Fatalf("child process did not report (read %v, result %q)", read, result)
	}
	var left []string
	for tu, err := range s.List(ctx, &checkpointer.Config{ThreadID: thread}, checkpointer.ListOptions{}) {
		if err != nil {
			t.Fatal(err)
		}
		left = append(left, tu.Config.CheckpointID)
		if tu.ParentConfig != nil {
			if p, err := s.GetTuple(ctx, *tu.ParentConfig); err != nil || p == nil {
				t.Errorf("checkpoint %s (the other process's put: %s) continues %s, which the removal deleted before the put stored it: "+
					"the put and the removal interleaved", tu.Config.CheckpointID, result, tu.ParentConfig.CheckpointID)
			}
		}
	}
	if result != "ok" && !strings.Contains(result, "ErrParentMissing") {
		t.Errorf("the other process's put failed: %s", result)
	}
	t.Logf("child put: %s; left after the delete: %v", result, left)
}

// TestLeaseChild is the child process of TestLeaseSerializesProcesses.
func TestLeaseChild(t *testing.T) {
	arg, db, ok := childDatabase(t)
	if !ok {
		t.Skip("a child process of TestLeaseSerializesProcesses")
	}
	ctx := context.Background()
	s, err := mongosaver.New(db, mongosaver.Options{})
	if err != nil {
		t.Fatal(err)
	}
	mongosaver.SetAfterPutRead(s, func() {
		childproc.Say("READ")
		// Long enough for the other process's delete to run here when
		// nothing keeps it out.
		time.Sleep(2 * time.Second)
	})
	cfg := checkpointer.Config{ThreadID: arg.Thread, CheckpointID: arg.Parent}
	tu, err := s.GetTuple(ctx, cfg)
	if err != nil || tu == nil {
		t.Fatalf("read parent: %v %v", tu, err)
	}
	cp := tu.Checkpoint
	cp.ID, cp.TS = checkpointer.NewID(1), time.Now()
	v := s.NextVersion(cp.ChannelVersions["a"])
	cp.ChannelValues["a"], cp.ChannelVersions["a"] = "two", v
	_, err = s.Put(ctx, cfg, cp, checkpointer.Metadata{"step": 1}, map[string]string{"a": v})
	switch {
	case err == nil:
		childproc.Say("PUT ok")
	case errors.Is(err, checkpointer.ErrParentMissing):
		childproc.Say("PUT ErrParentMissing")
	default:
		childproc.Say("PUT error: %v", strings.ReplaceAll(err.Error(), "\n", " "))
	}
}
