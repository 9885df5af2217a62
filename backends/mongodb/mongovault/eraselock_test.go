package mongovault_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/memvault/memvault/audit"
	"github.com/memvault/memvault/backends/mongodb/mongotest"
	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/memvaulttest/childproc"
	"github.com/memvault/memvault/vault"
	"github.com/memvault/memvault/vault/vaulthook"
)

// lockEnv is subjectEnv with the key table and the audit trail in SQLite
// files, and the erasure lock's lease set by lease ("": the default).
func lockEnv(t *testing.T, lease string) (map[string]string, *mongo.Database) {
	t.Helper()
	db := mongotest.Database(t)
	dir := t.TempDir()
	env := subjectEnv(t, db.Name(), "MEMVAULT_KEY_TABLE", filepath.Join(dir, "keys.db"),
		"MEMVAULT_AUDIT", "true", "MEMVAULT_AUDIT_TABLE", filepath.Join(dir, "audit.db"))
	if lease != "" {
		env["MEMVAULT_DSN"] += "/?memvault_erase_lease=" + lease
	}
	return env, db
}

// putNotes writes a checkpoint of thread.
func putNotes(t *testing.T, h *vault.Handle, thread string) {
	t.Helper()
	cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(0), TS: time.Now(),
		ChannelValues: map[string]any{"notes": thread + " notes"}, ChannelVersions: map[string]string{"notes": h.Saver.NextVersion("")}}
	if _, err := h.Saver.Put(t.Context(), checkpointer.Config{ThreadID: thread}, cp, checkpointer.Metadata{}, cp.ChannelVersions); err != nil {
		t.Fatal(err)
	}
}

// readable reports whether thread's latest checkpoint reads.
func readable(t *testing.T, h *vault.Handle, thread string) bool {
	t.Helper()
	tup, err := h.Saver.GetTuple(t.Context(), checkpointer.Config{ThreadID: thread})
	return err == nil && tup != nil
}

// erasures counts the audit trail's subject.erase records of subject.
func erasures(t *testing.T, h *vault.Handle, subject string) int {
	t.Helper()
	n := 0
	if err := h.Audit.Records(t.Context(), audit.Filter{}, func(r audit.Record) error {
		if r.Op == audit.OpSubjectErase && r.Subject == subject {
			n++
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return n
}

// pausedForget starts h.ForgetWith(subject, opt) and returns once it has
// claimed its erasure intent, paused there until resume, which lets it go
// on and returns its error.
func pausedForget(t *testing.T, h *vault.Handle, subject string, opt vault.ForgetOptions) (resume func() error) {
	t.Helper()
	reached, release := make(chan struct{}), make(chan struct{})
	vaulthook.AfterClaim(h, func(int64) { close(reached); <-release })
	done := make(chan error, 1)
	go func() { _, err := h.ForgetWith(context.Background(), subject, opt); done <- err }()
	select {
	case <-reached:
	case err := <-done:
		t.Fatalf("Forget(%s) returned before its key transaction: %v", subject, err)
	}
	var once sync.Once
	var err error
	resume = func() error {
		once.Do(func() { close(release); err = <-done })
		return err
	}
	t.Cleanup(func() { _ = resume() })
	return resume
}

// intents returns the erasure intents the database holds.
func intents(t *testing.T, db *mongo.Database) []string {
	t.Helper()
	cur, err := db.Collection("memvault_meta").Find(t.Context(), bson.D{{Key: "_id", Value: bson.D{{Key: "$regex", Value: "^mark:erasure_intent_"}}}})
	if err != nil {
		t.Fatal(err)
	}
	var docs []struct {
		ID string `bson:"_id"`
	}
	if err := cur.All(t.Context(), &docs); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, d := range docs {
		out = append(out, d.ID)
	}
	return out
}

// TestMongoOpenLeavesALiveForgetsIntent (session 25's closing note):
// MongoDB had no erasure lock, so an Open run while a Forget was between
// its intent and its key transaction took the intent for a killed
// Forget's and finished it itself: a second subject.erase record and a
// warning that a Forget "recorded and did not finish" an erasure that was
// running. The Forget now holds a lease from before its claim until its
// intent is done, and Open leaves the intent of a lease held.
func TestMongoOpenLeavesALiveForgetsIntent(t *testing.T) {
	env, _ := lockEnv(t, "")
	h, err := openEnv(t, env)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	putNotes(t, h, "carol:1")
	putNotes(t, h, "dave:1")
	resume := pausedForget(t, h, "carol", vault.ForgetOptions{})
	h2, err := openEnv(t, env)
	if err != nil {
		_ = resume()
		t.Fatalf("Open while a Forget runs: %v", err)
	}
	warned := strings.Join(h2.Warnings, "\n")
	h2.Close()
	if err := resume(); err != nil {
		t.Fatalf("the Forget: %v", err)
	}
	if warned != "" {
		t.Errorf("an Open while Forget(carol) ran warned: %q", warned)
	}
	if n := erasures(t, h, "carol"); n != 1 {
		t.Errorf("%d subject.erase records of carol for one Forget, want 1", n)
	}
	if readable(t, h, "carol:1") {
		t.Error("carol:1 reads after Forget(carol)")
	}
	if !readable(t, h, "dave:1") {
		t.Error("dave:1 does not read after Forget(carol)")
	}
	h3, err := openEnv(t, env)
	if err != nil {
		t.Fatal(err)
	}
	warned = strings.Join(h3.Warnings, "\n")
	h3.Close()
	if warned != "" {
		t.Errorf("an Open after the Forget warned: %q", warned)
	}
}

// TestMongoConcurrentForgetsClaimInOrder: without a lock two Forgets
// claimed intents n and n+1 at once, and the second could start its
// erasure in the key table first (its guard record past the table's
// count meanwhile, refusing a readmitted subject's writes). With the
// lease, a Forget claims only once the Forget before it is done.
//
// While the first Forget is paused after its claim, a second that does
// not wait (LockWait negative) must be refused, having claimed nothing:
// it returns, so this needs no time given to it. A second that waits is
// then started and the first resumed: nothing outside the waiting
// Forget shows its tries of the lease (a refused upsert writes nothing),
// so whether it tried before the resume is left to the scheduler; what
// is checked of it is the intent it claims once it runs (2: after
// carol's, with the key table counting it).
func TestMongoConcurrentForgetsClaimInOrder(t *testing.T) {
	env, db := lockEnv(t, "")
	a, err := openEnv(t, env)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	putNotes(t, a, "carol:1")
	putNotes(t, a, "dave:1")
	b, err := openEnv(t, env)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	resume := pausedForget(t, a, "carol", vault.ForgetOptions{})
	bClaimed := make(chan int64, 2)
	vaulthook.AfterClaim(b, func(n int64) { bClaimed <- n })
	_, err = b.ForgetWith(t.Context(), "dave", vault.ForgetOptions{LockWait: -1})
	select {
	case n := <-bClaimed:
		t.Fatalf("Forget(dave) claimed intent %d while Forget(carol) had claimed its own and not finished (intents %q)", n, intents(t, db))
	default:
	}
	if !errors.Is(err, vault.ErrErasureLocked) {
		t.Fatalf("Forget(dave), not waiting, while Forget(carol) holds the lease: %v; want vault.ErrErasureLocked", err)
	}
	if got := intents(t, db); len(got) != 1 {
		t.Fatalf("intents %q; want carol's only", got)
	}
	bDone := make(chan error, 1)
	go func() { _, err := b.Forget(context.Background(), "dave"); bDone <- err }()
	if err := resume(); err != nil {
		t.Fatalf("Forget(carol): %v", err)
	}
	if err := <-bDone; err != nil {
		t.Fatalf("Forget(dave): %v", err)
	}
	if n := <-bClaimed; n != 2 {
		t.Errorf("Forget(dave) claimed intent %d, want 2", n)
	}
	// The readmitted subject writes again: its guard record is the key
	// table's count.
	if err := b.Readmit(t.Context(), "dave"); err != nil {
		t.Fatal(err)
	}
	putNotes(t, b, "dave:2")
}

// TestMongoForgetLosesItsLease: a Forget whose lease was taken while it
// was paused after its claim (the process stopped longer than the lease,
// and another took it; here the lease document is overwritten) stops with
// the erasure lock lost before its key transaction, rather than run
// beside the taker, which finishes its intent.
func TestMongoForgetLosesItsLease(t *testing.T) {
	env, db := lockEnv(t, "")
	h, err := openEnv(t, env)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	putNotes(t, h, "carol:1")
	resume := pausedForget(t, h, "carol", vault.ForgetOptions{})
	res, err := db.Collection("memvault_meta").UpdateMany(t.Context(), bson.D{{Key: "_id", Value: bson.D{{Key: "$regex", Value: "^erasure_lock:"}}}},
		bson.D{{Key: "$set", Value: bson.D{{Key: "token", Value: "another holder's"}}}})
	if err != nil || res.MatchedCount != 1 {
		t.Fatalf("the lease of a paused Forget: %v, %d documents; want 1", err, res.MatchedCount)
	}
	err = resume()
	if err == nil || !strings.Contains(err.Error(), "erasure lock was lost") {
		t.Fatalf("Forget(carol) whose lease was taken: %v; want the erasure lock lost", err)
	}
	if !readable(t, h, "carol:1") {
		t.Error("carol's keys were destroyed by a Forget that had lost its lease")
	}
}

// TestMongoForgetLockWaitBounded: a Forget waiting for the lease another
// Forget holds gives up at ForgetOptions.LockWait with
// vault.ErrErasureLocked, having claimed nothing.
func TestMongoForgetLockWaitBounded(t *testing.T) {
	env, db := lockEnv(t, "")
	a, err := openEnv(t, env)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	putNotes(t, a, "carol:1")
	putNotes(t, a, "dave:1")
	b, err := openEnv(t, env)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	resume := pausedForget(t, a, "carol", vault.ForgetOptions{})
	_, err = b.ForgetWith(t.Context(), "dave", vault.ForgetOptions{LockWait: 300 * time.Millisecond})
	if !errors.Is(err, vault.ErrErasureLocked) {
		t.Errorf("Forget(dave) while Forget(carol) holds the lease: %v; want vault.ErrErasureLocked", err)
	}
	if got := intents(t, db); len(got) != 1 {
		t.Errorf("intents %q; want carol's only", got)
	}
	if !readable(t, b, "dave:1") {
		t.Error("dave:1 does not read after a Forget(dave) that did not get the lock")
	}
	if err := resume(); err != nil {
		t.Fatal(err)
	}
}

// TestMongoKilledForgetsLeaseExpires: a Forget killed (SIGKILL) after its
// claim leaves its lease until it expires; the next Forget waits for it,
// then finishes the killed Forget's intent before its own.
func TestMongoKilledForgetsLeaseExpires(t *testing.T) {
	env, db := lockEnv(t, "1s")
	h, err := openEnv(t, env)
	if err != nil {
		t.Fatal(err)
	}
	putNotes(t, h, "carol:1")
	putNotes(t, h, "dave:1")
	h.Close()
	forgetter := childproc.Start(t, "TestMongoForgetChild", env)
	select {
	case l := <-forgetter.Lines:
		if l != "claimed" {
			t.Fatalf("forgetter: %q", l)
		}
	case <-time.After(time.Minute):
		t.Fatal("the forgetter did not claim its intent")
	}
	forgetter.Kill()
	var lease struct {
		Expires time.Time `bson:"expires"`
	}
	if err := db.Collection("memvault_meta").FindOne(t.Context(), bson.D{{Key: "_id", Value: bson.D{{Key: "$regex", Value: "^erasure_lock:"}}}}).Decode(&lease); err != nil {
		t.Fatalf("the killed Forget's lease: %v", err)
	}
	h, err = openEnv(t, env)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	var told []string
	if _, err := h.ForgetWith(t.Context(), "dave", vault.ForgetOptions{Progress: func(m string) { told = append(told, m) }}); err != nil {
		t.Fatalf("Forget(dave) after a killed Forget(carol): %v", err)
	}
	if !strings.Contains(strings.Join(told, "\n"), `data subject "carol"`) {
		t.Errorf("Forget(dave) did not finish the killed Forget(carol) first: told %q", told)
	}
	if readable(t, h, "carol:1") || readable(t, h, "dave:1") {
		t.Error("a thread of carol or dave reads after their erasures")
	}
}

// TestMongoForgetChild is the killed Forget of
// TestMongoKilledForgetsLeaseExpires: paused after its claim.
func TestMongoForgetChild(t *testing.T) {
	var env map[string]string
	if !childproc.Arg(t, &env) {
		t.Skip("a child process of TestMongoKilledForgetsLeaseExpires")
	}
	h, err := openEnv(t, env)
	if err != nil {
		t.Fatal(err)
	}
	vaulthook.AfterClaim(h, func(int64) {
		childproc.Say("claimed")
		time.Sleep(time.Minute)
	})
	_, _ = h.Forget(context.Background(), "carol")
}

// TestEraseLeaseParam: the lease's URI parameter is memvault's own (the
// driver does not see it) and refuses what is not a duration in range.
func TestEraseLeaseParam(t *testing.T) {
	for _, bad := range []string{"x", "0s", "-1s", "10ms", "2h"} {
		env := subjectEnv(t, "db", "MEMVAULT_KEY_TABLE", filepath.Join(t.TempDir(), "keys.db"))
		env["MEMVAULT_DSN"] += "/?" + "memvault_erase_lease=" + bad
		if h, err := openEnv(t, env); err == nil {
			h.Close()
			t.Errorf("memvault_erase_lease=%s: opened", bad)
		} else if !strings.Contains(err.Error(), "memvault_erase_lease") {
			t.Errorf("memvault_erase_lease=%s: %v; want an error naming it", bad, err)
		}
	}
}

// TestMongoForgetThreadWithOnlyWrites (session 25's closing note): Forget
// listed a subject's threads (by thread id) from the checkpoints alone, so
// a thread holding only pending writes — its checkpoints deleted by a
// removal killed between its deletes (checkpoints go first), or writes
// stored by another writer before its checkpoint — kept them, sealed
// under the destroyed key but still stored. Forget now lists the threads
// of every collection holding a thread's rows.
func TestMongoForgetThreadWithOnlyWrites(t *testing.T) {
	env, db := lockEnv(t, "")
	h, err := openEnv(t, env)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	ctx := t.Context()
	putNotes(t, h, "carol:1")
	putNotes(t, h, "dave:1")
	for _, th := range []string{"carol:2", "dave:2"} {
		putNotes(t, h, th)
		tup, err := h.Saver.GetTuple(ctx, checkpointer.Config{ThreadID: th})
		if err != nil || tup == nil {
			t.Fatal(tup, err)
		}
		if err := h.Saver.PutWrites(ctx, tup.Config, []checkpointer.Write{{Channel: "notes", Value: th + " pending"}}, "task-1", ""); err != nil {
			t.Fatal(err)
		}
		// A removal killed after its checkpoints' delete.
		if _, err := db.Collection("checkpoints").DeleteMany(ctx, bson.D{{Key: "thread_id", Value: th}}); err != nil {
			t.Fatal(err)
		}
	}
	count := func(th string) int64 {
		n, err := db.Collection("checkpoint_writes").CountDocuments(ctx, bson.D{{Key: "thread_id", Value: th}})
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	if count("carol:2") == 0 {
		t.Fatal("no pending write of carol:2 to forget")
	}
	if _, err := h.Forget(ctx, "carol"); err != nil {
		t.Fatal(err)
	}
	if n := count("carol:2"); n != 0 {
		t.Errorf("%d pending writes of carol:2 stay after Forget(carol)", n)
	}
	if n := count("dave:2"); n == 0 {
		t.Error("Forget(carol) deleted dave:2's pending writes")
	}
}
