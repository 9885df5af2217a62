package mongovault_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/keys"
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

// TestReviewS27ForgetWithWriterOnMongoDB: a second handle (as another
// process, same key table) writes new threads of carol in a loop while
// Forget(carol) runs. Once Forget returned, no document of carol stays,
// and carol's next write is refused.
func TestReviewS27ForgetWithWriterOnMongoDB(t *testing.T) {
	env, db := lockEnv(t, "")
	f, err := openEnv(t, env)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w, err := openEnv(t, env)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	ctx := t.Context()
	stop, started, done := make(chan struct{}), make(chan struct{}), make(chan [2]int, 1)
	go func() {
		var n [2]int
		for i := 0; ; i++ {
			select {
			case <-stop:
				done <- n
				return
			default:
			}
			cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(0), TS: time.Now(),
				ChannelValues: map[string]any{"notes": "secret"}, ChannelVersions: map[string]string{"notes": w.Saver.NextVersion("")}}
			if _, err := w.Saver.Put(ctx, checkpointer.Config{ThreadID: fmt.Sprintf("carol:w%d", i)}, cp, checkpointer.Metadata{}, cp.ChannelVersions); err == nil {
				n[0]++
				if n[0] == 3 {
					close(started)
				}
			} else {
				n[1]++
			}
		}
	}()
	<-started
	if _, err := f.Forget(ctx, "carol"); err != nil {
		t.Fatal(err)
	}
	close(stop)
	n := <-done
	t.Logf("writer: %d puts stored, %d refused", n[0], n[1])
	for _, c := range []string{"checkpoints", "checkpoint_writes"} {
		var ids []string
		if err := db.Collection(c).Distinct(ctx, "thread_id", bson.D{}).Decode(&ids); err != nil {
			t.Fatal(err)
		}
		for _, id := range ids {
			if strings.HasPrefix(id, "carol:") {
				t.Errorf("%s of %s stays after Forget(carol) returned", c, id)
			}
		}
	}
	if readable(t, w, "carol:late") {
		t.Error("carol:late readable")
	}
	cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(0), TS: time.Now(),
		ChannelValues: map[string]any{"notes": "late"}, ChannelVersions: map[string]string{"notes": w.Saver.NextVersion("")}}
	if _, err := w.Saver.Put(ctx, checkpointer.Config{ThreadID: "carol:late"}, cp, checkpointer.Metadata{}, cp.ChannelVersions); !errors.Is(err, keys.ErrSubjectErased) {
		t.Errorf("a put of carol after Forget returned: %v; want keys.ErrSubjectErased", err)
	}
}

// TestReviewS27ForgetEmailSubjectOnMongoDB: as vault's
// TestReviewS27ForgetEmailSubject, with the subject's items under
// MEMVAULT_SUBJECT_NAMESPACE=users.
func TestReviewS27ForgetEmailSubjectOnMongoDB(t *testing.T) {
	env, _ := lockEnv(t, "")
	env["MEMVAULT_SUBJECT_NAMESPACE"] = "users"
	h, err := openEnv(t, env)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	putNotes(t, h, "alice@example.com:visit-1")
	if r, err := h.Forget(t.Context(), "alice@example.com"); err != nil || r.Pending {
		t.Fatalf("Forget(alice@example.com): pending %v, %v", r.Pending, err)
	}
}
