package mongosaver

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/memvault/memvault/backends/mongodb/mongotest"
	"github.com/memvault/memvault/checkpointer"
)

// TestLongThreadIDNotEchoed: a removal takes a thread id of any length (a
// thread an earlier version stored must stay reachable), and the errors
// of its lease — held by another process, lost — quoted the id whole: a
// 64 KiB line bound for logs. They name it by its length and the limit
// now (checkpointer.NameID).
func TestLongThreadIDNotEchoed(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, err := New(mongotest.Database(t), Options{LeaseTTL: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Setup(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	huge := strings.Repeat("S", 64<<10)
	check := func(name string, err error) {
		t.Helper()
		if err == nil {
			t.Fatalf("%s: no error", name)
		}
		msg := err.Error()
		if strings.Contains(msg, huge[:64]) || len(msg) > 1000 {
			t.Errorf("%s: the id's text is echoed (%d bytes): %.300s", name, len(msg), msg)
		}
		if !strings.Contains(msg, strconv.Itoa(len(huge))+" bytes") || !strings.Contains(msg, strconv.Itoa(checkpointer.MaxIDBytes)) {
			t.Errorf("%s: the error does not name the thread by its length and the limit: %.300s", name, msg)
		}
	}
	// Another process holds the thread's lease: the removal waits until
	// its context ends (or the server refuses the id as a key: the error
	// names the thread either way).
	if _, err := s.d.leases.coll.InsertOne(ctx, bson.D{{Key: "_id", Value: huge}, {Key: "owner", Value: "another process"},
		{Key: "expires", Value: time.Now().Add(time.Hour)}, {Key: "token", Value: "x"}}); err != nil {
		t.Logf("the server refuses the lease document: %.200s", err)
	}
	wait, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	check("DeleteThread of a leased thread", s.DeleteThread(wait, huge))
}
