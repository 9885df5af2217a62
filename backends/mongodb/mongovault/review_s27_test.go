package mongovault_test

import (
	"fmt"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// TestReviewS27ForgetPagesOfThreads (session 27 review): Forget finds a
// subject's threads through RowThreadIDs, pages of 1000 thread ids read
// with {thread_id: {$gt: last}} sorted by thread_id and merged in Go's
// byte order. Carol's threads straddle the page (1000 before, more after,
// in upper and lower case, whose byte order and a collation's differ),
// held only as pending writes: after Forget, none stays.
func TestReviewS27ForgetPagesOfThreads(t *testing.T) {
	if testing.Short() {
		t.Skip("a thousand threads on FerretDB: ~3 minutes")
	}
	env, db := lockEnv(t, "")
	h, err := openEnv(t, env)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	ctx := t.Context()
	putNotes(t, h, "carol:1")
	putNotes(t, h, "dave:1")
	var docs []any
	var carol []string
	add := func(th string) {
		docs = append(docs, bson.D{{Key: "thread_id", Value: th}, {Key: "checkpoint_ns", Value: ""},
			{Key: "checkpoint_id", Value: "x"}, {Key: "task_id", Value: "t"}, {Key: "idx", Value: 0}})
		if strings.HasPrefix(th, "carol:") {
			carol = append(carol, th)
		}
	}
	for i := range 999 {
		add(fmt.Sprintf("carol:a%04d", i))
	}
	for _, th := range []string{"carol:B", "carol:b", "carol:Z", "carol:z", "carol:_", "carol:%", "carol:é", "dave:2", "Dave:3"} {
		add(th)
	}
	if _, err := db.Collection("checkpoint_writes").InsertMany(ctx, docs); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Forget(ctx, "carol"); err != nil {
		t.Fatal(err)
	}
	var ids []string
	if err := db.Collection("checkpoint_writes").Distinct(ctx, "thread_id", bson.D{}).Decode(&ids); err != nil {
		t.Fatal(err)
	}
	var left []string
	for _, id := range ids {
		if strings.HasPrefix(id, "carol:") {
			left = append(left, id)
		}
	}
	if len(left) != 0 {
		t.Errorf("%d of carol's %d threads stay after Forget(carol): %.10q", len(left), len(carol), left)
	}
	if !readable(t, h, "dave:1") {
		t.Error("dave:1 is not readable after Forget(carol)")
	}
}
