package mongosaver_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/event"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/memvault/memvault/backends/mongodb/mongosaver"
	"github.com/memvault/memvault/backends/mongodb/mongotest"
	"github.com/memvault/memvault/checkpointer"
	mvkeys "github.com/memvault/memvault/keys"
	"github.com/memvault/memvault/memvaulttest/childproc"
)

// stickyChild is a writer in another OS process (this test binary,
// started again by childproc) whose leases last ten minutes: a test that
// waits for one of them to expire times out instead. Commands go to it one
// a line ("put THREAD", "slowput THREAD": the put pauses a second after
// its read, saying READ); each is answered with one line of result.
type stickyChild struct {
	t *testing.T
	c *childproc.Child
}

func startStickyChild(t *testing.T, db *mongo.Database, keysPath string) *stickyChild {
	t.Helper()
	return &stickyChild{t: t, c: startChild(t, "TestStickyChild", db, childArg{Keys: keysPath})}
}

// send gives the child a command and returns its next line of output.
func (c *stickyChild) send(command string) string {
	c.t.Helper()
	if err := c.c.Send(command); err != nil {
		c.t.Fatal(err)
	}
	return c.next()
}

func (c *stickyChild) next() string {
	c.t.Helper()
	for l := range c.c.Lines {
		if r, ok := strings.CutPrefix(l, "> "); ok {
			return r
		}
	}
	c.t.Fatalf("child process ended: %v", c.c.Wait())
	return ""
}

// TestStickyLeaseAgainstAnotherProcess: a put keeps its thread's lease
// after it ends (sticky.go); a removal in another process must still get
// the lease — by asking for it, not by waiting for it to expire (ten
// minutes in the writer here) — and must still not interleave with a put
// using the kept lease: it waits for the put's write.
func TestStickyLeaseAgainstAnotherProcess(t *testing.T) {
	t.Parallel()
	db := mongotest.Database(t)
	s := newSaverOn(t, db, mongosaver.Options{})
	child := startStickyChild(t, db, "")
	const thread = "kept"
	if r := child.send("put " + thread); r != "ok" {
		t.Fatalf("child put: %s", r)
	}
	if m := leaseDoc(t, db, thread); m == nil || m["owner"] == mongosaver.LeaseOwner(s) {
		t.Fatalf("lease after the child's put: %v; want kept by the child", m)
	}
	// A bound for liveness: without a hand-over the removal waits for
	// the child's lease to expire, ten minutes away.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := s.DeleteThread(ctx, thread); err != nil {
		t.Fatalf("DeleteThread while another process keeps the thread's lease: %v", err)
	}
	if tu, err := s.GetTuple(ctx, checkpointer.Config{ThreadID: thread}); err != nil || tu != nil {
		t.Fatalf("after DeleteThread: %v, %v; want nothing", tu, err)
	}

	// The child writes the thread again (keeping the lease), then puts
	// once more with the kept lease, pausing between its read and its
	// write: the removal must come after the write.
	if r := child.send("put " + thread); r != "ok" {
		t.Fatalf("child put: %s", r)
	}
	if r := child.send("slowput " + thread); r != "READ" {
		t.Fatalf("child slow put: %s", r)
	}
	if err := s.DeleteThread(ctx, thread); err != nil {
		t.Fatalf("DeleteThread during the other process's put: %v", err)
	}
	if r := child.next(); r != "ok" {
		t.Fatalf("child slow put: %s", r)
	}
	if n, err := db.Collection("checkpoints").CountDocuments(ctx, bson.D{{Key: "thread_id", Value: thread}}); err != nil || n != 0 {
		t.Fatalf("%d checkpoints left after the removal (%v): the other process's put wrote after the removal, interleaved with it", n, err)
	}
}

// TestErasureWhileLeaseKept: a writer in another process keeps the lease
// of a thread of a subject being erased, idle; DrainWrites must have it
// let go (not wait ten minutes for it to expire), and the writer's next
// put into the thread, with a lease taken again, must be refused as
// erased, so nothing of the subject is stored after the deletion.
func TestErasureWhileLeaseKept(t *testing.T) {
	t.Parallel()
	db := mongotest.Database(t)
	keysPath := filepath.Join(t.TempDir(), "keys.db")
	h := threadSubjects(t, keysPath)
	s, err := mongosaver.New(db, mongosaver.Options{Serde: h})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Setup(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	child := startStickyChild(t, db, keysPath)
	const thread = "dave-1"
	if r := child.send("put " + thread); r != "ok" {
		t.Fatalf("child put: %s", r)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if _, err := h.StartErasure(ctx, "dave"); err != nil {
		t.Fatal(err)
	}
	if err := s.DrainWrites(ctx); err != nil {
		t.Fatalf("DrainWrites while another process keeps a lease: %v", err)
	}
	if err := s.DeleteThread(ctx, thread); err != nil {
		t.Fatal(err)
	}
	if r := child.send("put " + thread); !strings.Contains(r, "erased") {
		t.Fatalf("child put after the erasure: %s; want refused as erased", r)
	}
	if n, err := db.Collection("checkpoints").CountDocuments(ctx, bson.D{{Key: "thread_id", Value: thread}}); err != nil || n != 0 {
		t.Fatalf("%d checkpoints of the erased subject stored (%v)", n, err)
	}
}

// TestStickyChild is the child process of the sticky lease tests.
func TestStickyChild(t *testing.T) {
	arg, db, ok := childDatabase(t)
	if !ok {
		t.Skip("a child process of the sticky lease tests")
	}
	ctx := context.Background()
	opt := mongosaver.Options{LeaseTTL: 10 * time.Minute}
	if arg.Keys != "" {
		opt.Serde = threadSubjects(t, arg.Keys)
	}
	s, err := mongosaver.New(db, opt)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	slow := false
	mongosaver.SetAfterPutRead(s, func() {
		if slow {
			childproc.Say("> READ")
			time.Sleep(time.Second)
		}
	})
	for line := range childproc.Commands() {
		cmd, thread, _ := strings.Cut(line, " ")
		slow = cmd == "slowput"
		cfg := checkpointer.Config{ThreadID: thread}
		cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(0), TS: time.Now(),
			ChannelValues: map[string]any{"notes": "allergic to peanuts"}, ChannelVersions: map[string]string{}}
		tu, err := s.GetTuple(ctx, cfg)
		if err == nil && tu != nil {
			cfg, cp.ChannelVersions = tu.Config, tu.Checkpoint.ChannelVersions
		}
		v := s.NextVersion(cp.ChannelVersions["notes"])
		cp.ChannelVersions["notes"] = v
		if err == nil {
			_, err = s.Put(ctx, cfg, cp, checkpointer.Metadata{}, map[string]string{"notes": v})
		}
		switch {
		case err == nil:
			childproc.Say("> ok")
		case errors.Is(err, mvkeys.ErrSubjectErased):
			childproc.Say("> erased")
		default:
			childproc.Say("> error: %s", strings.ReplaceAll(err.Error(), "\n", " "))
		}
	}
}

// TestSteadyPutsTakeNoLease: puts following each other on one thread
// send no command to the lease collection but the renewer's reads: the
// first put takes the lease and keeps it (sticky.go). (Before: every put
// took, confirmed and released it — three round trips, a findAndModify,
// an update and a delete, per put.)
func TestSteadyPutsTakeNoLease(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := mongotest.Database(t)
	var mu sync.Mutex
	counting, writes := false, map[string]int{}
	mon := &event.CommandMonitor{Started: func(_ context.Context, e *event.CommandStartedEvent) {
		if coll, ok := e.Command.Lookup(e.CommandName).StringValueOK(); ok && coll == "memvault_leases" && e.CommandName != "find" {
			mu.Lock()
			if counting {
				writes[e.CommandName]++
			}
			mu.Unlock()
		}
	}}
	client, err := mongo.Connect(options.Client().ApplyURI(mongotest.URI(t)).SetMonitor(mon))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = client.Disconnect(ctx) }()
	// A renewal every 100 s: none during the puts.
	s, err := mongosaver.New(client.Database(db.Name()), mongosaver.Options{LeaseTTL: 5 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	cfg := checkpointer.Config{ThreadID: "steady"}
	put := func(i int) {
		v := s.NextVersion("")
		for range i {
			v = s.NextVersion(v)
		}
		cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(i), TS: time.Now(),
			ChannelValues: map[string]any{"a": i}, ChannelVersions: map[string]string{"a": v}}
		if cfg, err = s.Put(ctx, cfg, cp, checkpointer.Metadata{"step": i}, cp.ChannelVersions); err != nil {
			t.Fatal(err)
		}
	}
	put(0)
	mu.Lock()
	counting = true
	mu.Unlock()
	for i := 1; i <= 3; i++ {
		put(i)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(writes) > 0 {
		t.Fatalf("3 puts after the first sent %v to memvault_leases; want nothing (the lease kept)", writes)
	}
}
