package mongosaver

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/event"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/memvault/memvault/backends/mongodb/mongotest"
)

// TestRowThreadsPageReadsWhatItReturns: RowThreads(after, limit), which
// erasure and re-encryption page through, reads from each of its three
// collections about the ids it returns — no distinct of every thread id
// after after (before: three distincts, 1 503 ids read for a page of 1).
// Threads with many documents (one thread's checkpoints, pending writes
// and chunks) are each returned once and paging walks them all in order.
func TestRowThreadsPageReadsWhatItReturns(t *testing.T) {
	ctx := context.Background()
	db := mongotest.Database(t)
	var mu sync.Mutex
	read := 0 // thread ids (distinct) or documents (find) in replies
	count := func(doc bson.Raw, path ...string) {
		if vals, ok := doc.Lookup(path...).ArrayOK(); ok {
			n, _ := vals.Values()
			mu.Lock()
			read += len(n)
			mu.Unlock()
		}
	}
	mon := &event.CommandMonitor{Succeeded: func(_ context.Context, e *event.CommandSucceededEvent) {
		switch e.CommandName {
		case "distinct":
			count(e.Reply, "values")
		case "find":
			count(e.Reply, "cursor", "firstBatch")
		case "getMore":
			count(e.Reply, "cursor", "nextBatch")
		}
	}}
	client, err := mongo.Connect(options.Client().ApplyURI(mongotest.URI(t)).SetMonitor(mon))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = client.Disconnect(context.Background()) })
	mdb := client.Database(db.Name())
	const threads = 600
	for _, c := range []string{checkpts, writesCol, bigCol} {
		docs := make([]any, 0, threads)
		for i := range threads {
			// Checkpoints hold the even threads, the other collections the odd ones too.
			if c == checkpts && i%2 == 1 {
				continue
			}
			docs = append(docs, bson.D{{Key: fThread, Value: fmt.Sprintf("t%05d", i)}, {Key: fNS, Value: ""}, {Key: fID, Value: c}})
		}
		// Thread "m" has many documents in every collection.
		for j := range 40 {
			docs = append(docs, bson.D{{Key: fThread, Value: "m"}, {Key: fNS, Value: ""}, {Key: fID, Value: fmt.Sprint(j)}})
		}
		if _, err := mdb.Collection(c).InsertMany(ctx, docs); err != nil {
			t.Fatal(err)
		}
	}
	d := newDriver(mdb)
	mu.Lock()
	read = 0
	mu.Unlock()
	ids, err := d.RowThreads(ctx, "", 1)
	if err != nil || len(ids) != 1 || ids[0] != "m" {
		t.Fatalf("RowThreads(\"\", 1) = %v, %v", ids, err)
	}
	mu.Lock()
	n := read
	mu.Unlock()
	if n > 3*40 {
		t.Errorf("RowThreads(\"\", 1) over %d threads read %d thread ids or documents from the server; a page should read about what it returns", threads, n)
	}
	// Paging in pages of 25 walks every thread once, in order; so does Threads over the checkpoints.
	for _, tc := range []struct {
		name string
		page func(after string, limit int) ([]string, error)
		want int
	}{{"RowThreads", func(a string, l int) ([]string, error) { return d.RowThreads(ctx, a, l) }, threads + 1},
		{"Threads", func(a string, l int) ([]string, error) { return d.Threads(ctx, a, l) }, threads/2 + 1}} {
		var all []string
		after := ""
		for {
			ids, err := tc.page(after, 25)
			if err != nil {
				t.Fatal(err)
			}
			all = append(all, ids...)
			if len(ids) < 25 {
				break
			}
			after = ids[len(ids)-1]
		}
		if len(all) != tc.want || !slices.IsSorted(all) || len(slices.Compact(slices.Clone(all))) != len(all) {
			t.Errorf("%s paged %d ids (sorted %v), want %d distinct", tc.name, len(all), slices.IsSorted(all), tc.want)
		}
	}
}
