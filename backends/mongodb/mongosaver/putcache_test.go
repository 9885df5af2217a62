package mongosaver_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/event"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/memvault/memvault/backends/mongodb/mongosaver"
	"github.com/memvault/memvault/backends/mongodb/mongotest"
	"github.com/memvault/memvault/checkpointer"
)

// countingDB is db on a client of its own whose commands to the
// checkpoints collection are counted by name while counting is on.
type countingDB struct {
	db       *mongo.Database
	mu       sync.Mutex
	counting bool
	cmds     map[string]int
}

func newCountingDB(t *testing.T) *countingDB {
	t.Helper()
	name := mongotest.Database(t).Name()
	c := &countingDB{cmds: map[string]int{}}
	mon := &event.CommandMonitor{Started: func(_ context.Context, e *event.CommandStartedEvent) {
		if coll, ok := e.Command.Lookup(e.CommandName).StringValueOK(); ok && coll == "checkpoints" {
			c.mu.Lock()
			if c.counting {
				c.cmds[e.CommandName]++
			}
			c.mu.Unlock()
		}
	}}
	client, err := mongo.Connect(options.Client().ApplyURI(mongotest.URI(t)).SetMonitor(mon))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = client.Disconnect(context.Background()) })
	c.db = client.Database(name)
	return c
}

func (c *countingDB) count(on bool) map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.counting = on
	out := c.cmds
	c.cmds = map[string]int{}
	return out
}

// stepper puts the steps of one thread, each on the one before, with one
// channel changing per step.
type stepper struct {
	t   *testing.T
	s   *mongosaver.Saver
	cfg checkpointer.Config
	v   string
}

func (st *stepper) put(value any) checkpointer.Config {
	st.t.Helper()
	st.v = st.s.NextVersion(st.v)
	cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(0), TS: time.Now(),
		ChannelValues: map[string]any{"a": value}, ChannelVersions: map[string]string{"a": st.v}}
	cfg, err := st.s.Put(context.Background(), st.cfg, cp, checkpointer.Metadata{}, cp.ChannelVersions)
	if err != nil {
		st.t.Fatal(err)
	}
	st.cfg = cfg
	return cfg
}

// TestSteadyPutsSendOneCommand: once a process has written a thread twice
// under the lease it keeps, each further put on the one before sends its
// document alone — what the raw driver's upsert sends — not a read then
// the document (putcache.go). (Before: a find and an update per put, 6
// commands for the 3 puts.)
func TestSteadyPutsSendOneCommand(t *testing.T) {
	t.Parallel()
	c := newCountingDB(t)
	s, err := mongosaver.New(c.db, mongosaver.Options{LeaseTTL: 5 * time.Minute, DangerousAssumeSoleWriter: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	st := &stepper{t: t, s: s, cfg: checkpointer.Config{ThreadID: "steady"}}
	st.put("0")
	st.put("1") // the second put reads the namespace's ids and keys
	c.count(true)
	for i := 2; i < 5; i++ {
		st.put(i)
	}
	got := c.count(false)
	if len(got) != 1 || got["update"] != 3 {
		t.Fatalf("3 steady puts sent %v to checkpoints; want 3 update commands and nothing else", got)
	}
	// And they read back as written.
	tu, err := s.GetTuple(context.Background(), checkpointer.Config{ThreadID: "steady"})
	if err != nil || tu == nil || tu.Checkpoint.ChannelValues["a"] != int64(4) || tu.ParentConfig == nil {
		t.Fatalf("latest after the steady puts: %+v, %v", tu, err)
	}
}

// TestKnownThreadForgottenOnHandOver: what a process knows of a thread
// holds only while it keeps the lease. Here it lets the lease go to
// another writer, which stores a fork at the version this process then
// puts next; the first value stored at a (channel, version) is the one
// read (the conformance suite's rule), so this process's put must read
// the thread again rather than trust what it knew. Without the token
// check it would store and read back its own value.
func TestKnownThreadForgottenOnHandOver(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := mongotest.Database(t)
	a, err := mongosaver.New(db, mongosaver.Options{DangerousAssumeSoleWriter: true})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := mongosaver.New(db, mongosaver.Options{DangerousAssumeSoleWriter: true})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	st := &stepper{t: t, s: a, cfg: checkpointer.Config{ThreadID: "shared"}}
	st.put("a0")
	st.put("a1")
	last := st.put("a2") // known now: ids, keys and this document
	// The other writer asks for the lease (a hands it over) and forks
	// from a's last checkpoint at the next version.
	next := a.NextVersion(st.v)
	cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(0), TS: time.Now(),
		ChannelValues: map[string]any{"a": "b's"}, ChannelVersions: map[string]string{"a": next}}
	if _, err := b.Put(ctx, last, cp, checkpointer.Metadata{}, cp.ChannelVersions); err != nil {
		t.Fatal(err)
	}
	mine := st.put("a3") // the same version, from the same parent
	tu, err := a.GetTuple(ctx, mine)
	if err != nil || tu == nil {
		t.Fatalf("read back: %v, %v", tu, err)
	}
	if got := tu.Checkpoint.ChannelValues["a"]; got != "b's" {
		t.Fatalf("value at version %s after the other writer stored one: %v; want the first stored, %q", next, got, "b's")
	}
}
