package mongosaver_test

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/memvault/memvault/backends/mongodb/mongosaver"
	"github.com/memvault/memvault/backends/mongodb/mongotest"
	"github.com/memvault/memvault/checkpointer"
)

// crashSaver is a set-up Saver on a fresh database, and the database.
func crashSaver(t *testing.T, opt mongosaver.Options) (*mongosaver.Saver, *mongo.Database) {
	t.Helper()
	db := mongotest.Database(t)
	s, err := mongosaver.New(db, opt)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Setup(context.Background()); err != nil {
		t.Fatal(err)
	}
	return s, db
}

// bigString is a value over the 16 MiB document limit (three chunks).
func bigString(fill string) string {
	return strings.Repeat(fill, (mongosaver.MaxDocumentSize+1<<20)/len(fill))
}

// wantValue fails unless the checkpoint of cfg reads channel doc as want.
func wantValue(t *testing.T, s *mongosaver.Saver, cfg checkpointer.Config, want string) {
	t.Helper()
	tu, err := s.GetTuple(context.Background(), cfg)
	if err != nil || tu == nil {
		t.Fatalf("GetTuple %v: %v, %v", cfg, tu, err)
	}
	got, _ := tu.Checkpoint.ChannelValues["doc"].(string)
	if got != want {
		prefix := got[:min(len(got), 16)]
		t.Fatalf("checkpoint %s: doc is %d bytes beginning %q, want the %d bytes put (beginning %q)", tu.Config.CheckpointID, len(got), prefix, len(want), want[:16])
	}
}

// TestBigValueDeadAttempt: a put killed after writing the first chunk of
// a large value, before its document, leaves that chunk; the step re-run
// stores the same (channel, version) — integer versions, as JS writes
// them — with another value. The stored checkpoint must read the value
// put, not the dead attempt's or a splice of both. (Before: chunks were
// keyed by (channel, version) alone and kept the first writer's, so the
// re-run's checkpoint read the dead attempt's first chunk and count.)
func TestBigValueDeadAttempt(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, db := crashSaver(t, mongosaver.Options{})
	const thread = "dead-attempt"
	// What the dead put left: the first of its three chunks.
	dead := []byte(strings.Repeat("X", 8<<20))
	if _, err := db.Collection("memvault_big_values").InsertOne(ctx, bson.D{{Key: "thread_id", Value: thread}, {Key: "checkpoint_ns", Value: ""},
		{Key: "key", Value: `["doc","1"]`}, {Key: "seq", Value: 0}, {Key: "n", Value: 3}, {Key: "type", Value: "json"}, {Key: "data", Value: bson.Binary{Data: dead}}}); err != nil {
		t.Fatal(err)
	}
	big := bigString("0123456789abcdef")
	cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(0), TS: time.Now(),
		ChannelValues: map[string]any{"doc": big, "note": "a"}, ChannelVersions: map[string]string{"doc": "1", "note": "1"}}
	cfg, err := s.Put(ctx, checkpointer.Config{ThreadID: thread}, cp, checkpointer.Metadata{}, cp.ChannelVersions)
	if err != nil {
		t.Fatal(err)
	}
	wantValue(t, s, cfg, big)

	// A continuation re-uses the stored value: no second copy.
	cp2 := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(1), TS: time.Now(),
		ChannelValues: map[string]any{"doc": big, "note": "b"}, ChannelVersions: map[string]string{"doc": "1", "note": "2"}}
	cfg2, err := s.Put(ctx, cfg, cp2, checkpointer.Metadata{}, map[string]string{"note": "2"})
	if err != nil {
		t.Fatal(err)
	}
	wantValue(t, s, cfg2, big)
	chunks := db.Collection("memvault_big_values")
	if n, err := chunks.CountDocuments(ctx, bson.D{{Key: "gen", Value: bson.D{{Key: "$exists", Value: true}}}}); err != nil || n != 3 {
		t.Fatalf("%d chunks of the value stored, want 3 (%v)", n, err)
	}
	// A removal in the namespace collects the dead attempt's chunk.
	if err := s.Prune(ctx, []string{thread}, checkpointer.PruneKeepLatest); err != nil {
		t.Fatal(err)
	}
	wantValue(t, s, cfg2, big)
	if n, err := chunks.CountDocuments(ctx, bson.D{}); err != nil || n != 3 {
		t.Fatalf("%d chunks left after the removal, want the 3 of the value kept (%v)", n, err)
	}
}

// TestBigOverwriteKilled: an overwrite (here CopyThread onto a thread
// holding the same checkpoints) stopped, as by kill -9, just before it
// writes a large value's chunks must leave the destination's checkpoints
// readable, their value whole; run again it completes and leaves one copy
// of the value. (Before: the overwrite deleted the chunks every
// checkpoint inheriting the value shared, then rewrote them; stopped in
// between, both checkpoints lost the value: "the large value of channel
// \"doc\" (version 1) is missing".)
func TestBigOverwriteKilled(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, db := crashSaver(t, mongosaver.Options{})
	big := bigString("0123456789abcdef")
	var cfgs []checkpointer.Config
	for _, th := range []string{"src", "dst"} {
		cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(0), TS: time.Now(),
			ChannelValues: map[string]any{"doc": big, "note": "a"}, ChannelVersions: map[string]string{"doc": "1", "note": "1"}}
		cfg, err := s.Put(ctx, checkpointer.Config{ThreadID: th}, cp, checkpointer.Metadata{}, cp.ChannelVersions)
		if err != nil {
			t.Fatal(err)
		}
		cp2 := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(1), TS: time.Now(),
			ChannelValues: map[string]any{"doc": big, "note": "b"}, ChannelVersions: map[string]string{"doc": "1", "note": "2"}}
		cfg2, err := s.Put(ctx, cfg, cp2, checkpointer.Metadata{}, map[string]string{"note": "2"})
		if err != nil {
			t.Fatal(err)
		}
		if th == "dst" {
			cfgs = []checkpointer.Config{cfg, cfg2}
		}
	}
	// The copy's goroutine ends at the first large value's chunks, its
	// deferred calls run but nothing after (no restore): a crash.
	mongosaver.SetBeforeBigChunks(s, func() { runtime.Goexit() })
	done := make(chan error, 1)
	go func() {
		defer close(done)
		done <- s.CopyThread(ctx, "src", "dst")
	}()
	if err, ok := <-done; ok {
		t.Fatalf("the copy was to stop at the chunks; it returned %v", err)
	}
	mongosaver.SetBeforeBigChunks(s, nil)
	for _, cfg := range cfgs {
		wantValue(t, s, cfg, big)
	}
	if err := s.CopyThread(ctx, "src", "dst"); err != nil {
		t.Fatal(err)
	}
	for _, cfg := range cfgs {
		wantValue(t, s, cfg, big)
	}
	if n, err := db.Collection("memvault_big_values").CountDocuments(ctx, bson.D{{Key: "thread_id", Value: "dst"}}); err != nil || n != 3 {
		t.Fatalf("%d chunks of dst after the copy, want the 3 of one copy of its value (%v)", n, err)
	}
}

// leaseDoc reads thread's lease document; nil when there is none.
func leaseDoc(t *testing.T, db *mongo.Database, thread string) bson.M {
	t.Helper()
	var m bson.M
	err := db.Collection("memvault_leases").FindOne(context.Background(), bson.D{{Key: "_id", Value: thread}}).Decode(&m)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestPutLeaseLost: a put whose lease is taken by another process while
// it works (its lease expired) must fail with ErrLockLost and store no
// checkpoint. (Before: the put never looked at its lease again and
// stored its checkpoint interleaved with the new holder.) The put's time
// runs out for real: a lease whose expiry this process set more than a
// third of the TTL ahead is confirmed by the clock alone (sticky.go), so
// a takeover before the expiry — which no process following the protocol
// makes — would not be seen.
func TestPutLeaseLost(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, db := crashSaver(t, mongosaver.Options{LeaseTTL: time.Second})
	const thread = "stolen"
	mongosaver.SetAfterPutRead(s, func() {
		_, err := db.Collection("memvault_leases").UpdateOne(ctx, bson.D{{Key: "_id", Value: thread}},
			bson.D{{Key: "$set", Value: bson.D{{Key: "owner", Value: "another process"}, {Key: "expires", Value: time.Now().Add(time.Hour)}}}})
		if err != nil {
			t.Error(err)
		}
		// The put works past its lease's expiry (paused, say).
		time.Sleep(1100 * time.Millisecond)
	})
	cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(0), TS: time.Now(),
		ChannelValues: map[string]any{"a": "x"}, ChannelVersions: map[string]string{"a": "1"}}
	_, err := s.Put(ctx, checkpointer.Config{ThreadID: thread}, cp, checkpointer.Metadata{}, cp.ChannelVersions)
	if !errors.Is(err, mongosaver.ErrLockLost) {
		t.Fatalf("Put after its lease was taken: %v, want ErrLockLost", err)
	}
	if tu, err := s.GetTuple(ctx, checkpointer.Config{ThreadID: thread}); err != nil || tu != nil {
		t.Fatalf("after the refused put: %v, %v; want no checkpoint", tu, err)
	}
	if m := leaseDoc(t, db, thread); m == nil || m["owner"] != "another process" {
		t.Fatalf("lease after the refused put: %v; want the other process's, untouched", m)
	}
}

// TestPutRenewsLease: a put working longer than the lease's TTL (a slow
// write of large values) renews its lease, so no other process can take
// the thread under it. (Before: only Update renewed; a put's lease
// expired while it worked.)
func TestPutRenewsLease(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, db := crashSaver(t, mongosaver.Options{LeaseTTL: time.Second})
	const thread = "slow"
	var lease bson.M
	var readAt time.Time
	mongosaver.SetAfterPutRead(s, func() {
		// Hold the put until the lease it took has been renewed past its
		// first expiry, or a minute has gone by (a bound for liveness,
		// not a timing assertion: without renewal the expiry never moves).
		first, _ := leaseDoc(t, db, thread)["expires"].(bson.DateTime)
		for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
			readAt = time.Now()
			lease = leaseDoc(t, db, thread)
			if exp, _ := lease["expires"].(bson.DateTime); exp.Time().After(first.Time()) && readAt.After(first.Time()) {
				return
			}
		}
	})
	cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(0), TS: time.Now(),
		ChannelValues: map[string]any{"a": "x"}, ChannelVersions: map[string]string{"a": "1"}}
	if _, err := s.Put(ctx, checkpointer.Config{ThreadID: thread}, cp, checkpointer.Metadata{}, cp.ChannelVersions); err != nil {
		t.Fatal(err)
	}
	if lease == nil || lease["owner"] != mongosaver.LeaseOwner(s) {
		t.Fatalf("lease while the put worked: %v; want the put's", lease)
	}
	if exp, _ := lease["expires"].(bson.DateTime); !exp.Time().After(readAt) {
		t.Fatalf("lease read at %v, while the put worked, expired at %v: not renewed", readAt, exp.Time())
	}
}

// TestImportMarkCleared: an import that succeeded but could not release
// its leases (a network failure) must not leave its thread marked as
// being created: once the lease expires, the next taker would delete the
// whole imported thread. (Before: the mark stayed; Setup of another
// process then deleted the thread.)
func TestImportMarkCleared(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, db := crashSaver(t, mongosaver.Options{})
	mongosaver.SetBeforeRelease(s, func() error { return errors.New("network down") })
	if err := s.ImportThread(ctx, importItems(0)); err == nil {
		t.Fatal("ImportThread succeeded although releasing its lease failed")
	}
	if m := leaseDoc(t, db, "imp-0"); m == nil || m["created"] != nil {
		t.Fatalf("lease after the import: %v; want it left, without the created mark", m)
	}
	// The lease expires; another process sets up.
	if _, err := db.Collection("memvault_leases").UpdateOne(ctx, bson.D{{Key: "_id", Value: "imp-0"}},
		bson.D{{Key: "$set", Value: bson.D{{Key: "expires", Value: time.Now().Add(-time.Minute)}}}}); err != nil {
		t.Fatal(err)
	}
	other, err := mongosaver.New(db, mongosaver.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := other.Setup(ctx); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, err := range other.List(ctx, &checkpointer.Config{ThreadID: "imp-0"}, checkpointer.ListOptions{}) {
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	if n != importDepth {
		t.Fatalf("imported thread has %d checkpoints after another process's Setup, want %d", n, importDepth)
	}
}

// TestImportRestoreFailed: an import that fails and then cannot restore
// (undo) what it wrote must keep its leases, marked, so that the next
// taker — here the same process — deletes the half-imported thread.
// (Before: the leases were released, the mark with them, and the half
// import stayed; and a lease marked by this process was never recovered
// by it.)
func TestImportRestoreFailed(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, db := crashSaver(t, mongosaver.Options{})
	mongosaver.SetRollbackErr(s, errors.New("network down"))
	ictx, cancel := context.WithCancel(ctx)
	puts := 0
	mongosaver.SetAfterPutRead(s, func() {
		if puts++; puts == importDepth/2 {
			cancel() // the import fails half-way
		}
	})
	if err := s.ImportThread(ictx, importItems(1)); err == nil {
		t.Fatal("ImportThread succeeded although cancelled")
	}
	mongosaver.SetAfterPutRead(s, nil)
	if m := leaseDoc(t, db, "imp-1"); m == nil || m["created"] != true {
		t.Fatalf("lease after the failed restore: %v; want it kept, marked created", m)
	}
	// The next put of the thread (this process) recovers first.
	cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(99), TS: time.Now(),
		ChannelValues: map[string]any{"a": "fresh"}, ChannelVersions: map[string]string{"a": "1"}}
	if _, err := s.Put(ctx, checkpointer.Config{ThreadID: "imp-1"}, cp, checkpointer.Metadata{}, cp.ChannelVersions); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for tu, err := range s.List(ctx, &checkpointer.Config{ThreadID: "imp-1"}, checkpointer.ListOptions{}) {
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, tu.Config.CheckpointID)
	}
	if len(ids) != 1 || ids[0] != cp.ID {
		t.Fatalf("thread after the recovering put: checkpoints %v, want only %s (the half import deleted)", ids, cp.ID)
	}
}

// TestOwnMarkRecovered: a lease of this process still marked created (its
// recovery failed, or its restore did) is recovered by this process's
// next taker too. (Before: acquire recovered only other owners' marks.)
func TestOwnMarkRecovered(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, db := crashSaver(t, mongosaver.Options{})
	const thread = "own-mark"
	cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(0), TS: time.Now(),
		ChannelValues: map[string]any{"a": "half"}, ChannelVersions: map[string]string{"a": "1"}}
	if _, err := s.Put(ctx, checkpointer.Config{ThreadID: thread}, cp, checkpointer.Metadata{}, cp.ChannelVersions); err != nil {
		t.Fatal(err)
	}
	// The put kept its lease (sticky.go); the Update that left the mark
	// would have taken it over. Let it go, as DrainWrites does.
	if err := s.DrainWrites(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Collection("memvault_leases").InsertOne(ctx, bson.D{{Key: "_id", Value: thread}, {Key: "owner", Value: mongosaver.LeaseOwner(s)},
		{Key: "expires", Value: time.Now().Add(time.Minute)}, {Key: "created", Value: true}}); err != nil {
		t.Fatal(err)
	}
	cp2 := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(1), TS: time.Now(),
		ChannelValues: map[string]any{"a": "fresh"}, ChannelVersions: map[string]string{"a": "1"}}
	if _, err := s.Put(ctx, checkpointer.Config{ThreadID: thread}, cp2, checkpointer.Metadata{}, cp2.ChannelVersions); err != nil {
		t.Fatal(err)
	}
	if tu, err := s.GetTuple(ctx, checkpointer.Config{ThreadID: thread, CheckpointID: cp.ID}); err != nil || tu != nil {
		t.Fatalf("checkpoint of the unfinished creation after the recovering put: %v, %v; want it deleted", tu, err)
	}
}

// TestImportLeaseLost: an import (an Update) whose lease is taken by
// another process while it works must stop with ErrLockLost, leaving the
// thread to the new holder (nothing restored over its work). (Before:
// renewals ignored how many leases they matched, and the import went on
// writing the other process's thread.)
func TestImportLeaseLost(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, db := crashSaver(t, mongosaver.Options{LeaseTTL: time.Second})
	puts := 0
	mongosaver.SetAfterPutRead(s, func() {
		if puts++; puts == 2 {
			_, err := db.Collection("memvault_leases").UpdateOne(ctx, bson.D{{Key: "_id", Value: "imp-2"}},
				bson.D{{Key: "$set", Value: bson.D{{Key: "owner", Value: "another process"}, {Key: "expires", Value: time.Now().Add(time.Hour)}}}})
			if err != nil {
				t.Error(err)
			}
			time.Sleep(700 * time.Millisecond) // two renewal periods
		}
	})
	err := s.ImportThread(ctx, importItems(2))
	if !errors.Is(err, mongosaver.ErrLockLost) {
		t.Fatalf("ImportThread after its lease was taken: %v, want ErrLockLost", err)
	}
	if m := leaseDoc(t, db, "imp-2"); m == nil || m["owner"] != "another process" {
		t.Fatalf("lease after the stopped import: %v; want the other process's, untouched", m)
	}
}

// TestBigLegacyChunks: large values stored before generations (chunks
// without gen, documents naming none) still read whole after Setup, which
// drops the old unique index that admits one generation per key; a
// continuation stores the value under a generation, and a removal
// collects the old chunks once no document written before generations
// holds their key.
func TestBigLegacyChunks(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, db := crashSaver(t, mongosaver.Options{})
	const thread = "legacy"
	big := bigString("fedcba9876543210")
	cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(0), TS: time.Now(),
		ChannelValues: map[string]any{"doc": big, "note": "a"}, ChannelVersions: map[string]string{"doc": "1", "note": "1"}}
	cfg, err := s.Put(ctx, checkpointer.Config{ThreadID: thread}, cp, checkpointer.Metadata{}, cp.ChannelVersions)
	if err != nil {
		t.Fatal(err)
	}
	// Make it what the version before generations wrote.
	chunks, cps := db.Collection("memvault_big_values"), db.Collection("checkpoints")
	if _, err := chunks.UpdateMany(ctx, bson.D{}, bson.D{{Key: "$unset", Value: bson.D{{Key: "gen", Value: ""}}}}); err != nil {
		t.Fatal(err)
	}
	var doc bson.D
	if err := cps.FindOne(ctx, bson.D{{Key: "checkpoint_id", Value: cp.ID}}).Decode(&doc); err != nil {
		t.Fatal(err)
	}
	var legacy bson.D
	for _, e := range doc {
		switch e.Key {
		case "memvault_big_gens":
			continue
		case "memvault_values":
			var vs bson.A
			for _, v := range e.Value.(bson.A) {
				var kept bson.D
				for _, f := range v.(bson.D) {
					if f.Key != "g" {
						kept = append(kept, f)
					}
				}
				vs = append(vs, kept)
			}
			e.Value = vs
		}
		legacy = append(legacy, e)
	}
	if _, err := cps.ReplaceOne(ctx, bson.D{{Key: "checkpoint_id", Value: cp.ID}}, legacy); err != nil {
		t.Fatal(err)
	}
	if err := chunks.Indexes().DropOne(ctx, "memvault_big_values_gen"); err != nil {
		t.Fatal(err)
	}
	if _, err := chunks.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "thread_id", Value: 1}, {Key: "checkpoint_ns", Value: 1}, {Key: "key", Value: 1}, {Key: "seq", Value: 1}},
		Options: options.Index().SetUnique(true).SetName("memvault_big_values_key")}); err != nil {
		t.Fatal(err)
	}
	if err := s.Setup(ctx); err != nil {
		t.Fatal(err)
	}
	specs, err := chunks.Indexes().ListSpecifications(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, ix := range specs {
		if ix.Name == "memvault_big_values_key" {
			t.Fatal("Setup left the unique index of chunks before generations")
		}
	}
	wantValue(t, s, cfg, big)

	cp2 := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(1), TS: time.Now(),
		ChannelValues: map[string]any{"doc": big, "note": "b"}, ChannelVersions: map[string]string{"doc": "1", "note": "2"}}
	cfg2, err := s.Put(ctx, cfg, cp2, checkpointer.Metadata{}, map[string]string{"note": "2"})
	if err != nil {
		t.Fatal(err)
	}
	wantValue(t, s, cfg2, big)
	if err := s.Prune(ctx, []string{thread}, checkpointer.PruneKeepLatest); err != nil {
		t.Fatal(err)
	}
	wantValue(t, s, cfg2, big)
	if n, err := chunks.CountDocuments(ctx, bson.D{}); err != nil || n != 3 {
		t.Fatalf("%d chunks left after the removal, want the 3 of the value kept (%v)", n, err)
	}
}
