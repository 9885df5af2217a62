package mongosaver

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/event"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/memvault/memvault/backends/mongodb/mongotest"
)

// TestReviewS26ThreadsPageReadsEveryThread (session 26 review): the
// driver's Threads(after, limit), re-encryption's paging through the
// threads (256 a page, every run at least twice), sends one distinct
// command for every thread id after `after`, whatever the limit, and
// cuts the page in the client. Paging through N threads therefore moves
// ~N²/512 ids, and on MongoDB the reply must fit in one 16 MiB document:
// with ~33 000 threads of 500-byte ids (or ~370 000 short ones) the
// first page fails and `memvault keys reencrypt` cannot run at all
// (dropOrphanBig already avoids distinct for this reason). Here 3 000
// threads: a page of 1 id transfers all 3 000. Want: find with
// {thread_id: {$gt: after}}, sort thread_id, a projection and a limit
// (or an aggregation $group + $sort + $limit), so a page reads what it
// returns.
func TestReviewS26ThreadsPageReadsEveryThread(t *testing.T) {
	ctx := context.Background()
	db := mongotest.Database(t)
	var mu sync.Mutex
	replied := 0
	mon := &event.CommandMonitor{Succeeded: func(_ context.Context, e *event.CommandSucceededEvent) {
		if e.CommandName != "distinct" {
			return
		}
		vals, ok := e.Reply.Lookup("values").ArrayOK()
		if !ok {
			return
		}
		n, _ := vals.Values()
		mu.Lock()
		replied += len(n)
		mu.Unlock()
	}}
	client, err := mongo.Connect(options.Client().ApplyURI(mongotest.URI(t)).SetMonitor(mon))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = client.Disconnect(context.Background()) })
	mdb := client.Database(db.Name())
	const threads = 3000
	docs := make([]any, threads)
	for i := range docs {
		docs[i] = bson.D{{Key: fThread, Value: fmt.Sprintf("t%05d", i)}, {Key: fNS, Value: ""}, {Key: fID, Value: "1"}}
	}
	if _, err := mdb.Collection(checkpts).InsertMany(ctx, docs); err != nil {
		t.Fatal(err)
	}
	d := newDriver(mdb)
	ids, err := d.Threads(ctx, "", 1)
	if err != nil || len(ids) != 1 || ids[0] != "t00000" {
		t.Fatalf("Threads(\"\", 1) = %v, %v", ids, err)
	}
	mu.Lock()
	n := replied
	mu.Unlock()
	if n > 256 {
		t.Errorf("Threads(after, limit 1) over %d threads read %d thread ids from the server; a page should read what it returns", threads, n)
	}
}
