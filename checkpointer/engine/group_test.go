package engine_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/checkpointer/engine"
	"github.com/memvault/memvault/checkpointer/pgsaver"
	"github.com/memvault/memvault/checkpointer/sqlitesaver"
	"github.com/memvault/memvault/internal/sqlitedb"
	"github.com/memvault/memvault/memvaulttest/pgtest"
)

// groupWriters is the number of concurrent writers of the group tests.
const groupWriters = 16

// first stores the first checkpoint of thread, which its second inherits
// channel "a" from, and returns the second's config.
func first(t *testing.T, s checkpointer.Saver, thread string) checkpointer.Config {
	t.Helper()
	cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(0), TS: time.Now(),
		ChannelValues: map[string]any{"a": "a of " + thread}, ChannelVersions: map[string]string{"a": "1"}}
	cfg, err := s.Put(t.Context(), checkpointer.Config{ThreadID: thread}, cp, checkpointer.Metadata{"step": 0}, map[string]string{"a": "1"})
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// second is the second checkpoint of a thread: it keeps channel "a" of
// its parent (so the put needs the parent stored) and writes "b".
func second() (*checkpointer.Checkpoint, map[string]string) {
	return &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(1), TS: time.Now(),
			ChannelValues: map[string]any{"a": "inherited", "b": "new"}, ChannelVersions: map[string]string{"a": "1", "b": "2"}},
		map[string]string{"b": "2"}
}

// waitBusy returns once a commit of s's committer is in flight.
func waitBusy(t *testing.T, s *engine.Saver) {
	t.Helper()
	for !engine.Busy(s) {
		if t.Context().Err() != nil {
			t.Fatal("no commit started")
		}
		time.Sleep(time.Millisecond)
	}
}

// waitQueued returns once n writes wait in s's committer.
func waitQueued(t *testing.T, s *engine.Saver, n int) {
	t.Helper()
	for engine.Queued(s) < n {
		if t.Context().Err() != nil {
			t.Fatal("the writes never queued")
		}
		runtime.Gosched()
		time.Sleep(time.Millisecond)
	}
}

// runGroup holds the commit of writer 0 (hold, released by the returned
// function's caller via release), starts the 15 other writers — each the
// second checkpoint of its own thread, writer missing's config naming a
// parent that is not stored — waits until they queue behind writer 0,
// releases, and returns every writer's error.
func runGroup(t *testing.T, s checkpointer.Saver, e *engine.Saver, missing int, hold func() (release func())) ([]error, []checkpointer.Config, []string) {
	t.Helper()
	cfgs := make([]checkpointer.Config, groupWriters)
	for i := range cfgs {
		cfgs[i] = first(t, s, fmt.Sprintf("g-%d", i))
	}
	firsts := make([]checkpointer.Config, groupWriters)
	copy(firsts, cfgs)
	cfgs[missing].CheckpointID = checkpointer.NewID(99) // never stored
	release := hold()
	errs, ids := make([]error, groupWriters), make([]string, groupWriters)
	var wg sync.WaitGroup
	put := func(i int) {
		defer wg.Done()
		cp, nv := second()
		ids[i] = cp.ID
		_, errs[i] = s.Put(context.Background(), cfgs[i], cp, checkpointer.Metadata{"step": 1}, nv)
	}
	wg.Add(1)
	go put(0)
	// Writer 0 commits alone, held: the others arrive while it is in
	// flight.
	waitBusy(t, e)
	for i := 1; i < groupWriters; i++ {
		wg.Add(1)
		go put(i)
	}
	waitQueued(t, e, groupWriters-1)
	release()
	wg.Wait()
	return errs, firsts, ids
}

// checkGroup checks runGroup's outcome: only writer missing failed, with
// ErrParentMissing, storing nothing (blobs counts a thread's value rows
// of channel "b", which only the second checkpoint writes), and every
// other writer's checkpoint is stored whole.
func checkGroup(t *testing.T, s checkpointer.Saver, missing int, errs []error, firsts []checkpointer.Config, ids []string, blobs func(thread string) int) {
	t.Helper()
	if n := blobs(fmt.Sprintf("g-%d", missing)); n != 0 {
		t.Errorf("writer %d (parent missing): %d value rows of its put stored, want 0", missing, n)
	}
	for i, err := range errs {
		thread := fmt.Sprintf("g-%d", i)
		tp, gerr := s.GetTuple(t.Context(), checkpointer.Config{ThreadID: thread})
		if gerr != nil {
			t.Fatal(gerr)
		}
		if i == missing {
			if !errors.Is(err, checkpointer.ErrParentMissing) {
				t.Errorf("writer %d (parent missing): %v, want ErrParentMissing", i, err)
			}
			if tp == nil || tp.Checkpoint.ID != firsts[i].CheckpointID {
				t.Errorf("writer %d (parent missing): thread holds %v, want its first checkpoint only", i, tp)
			}
			continue
		}
		if err != nil {
			t.Errorf("writer %d: %v", i, err)
			continue
		}
		if tp == nil || tp.Checkpoint.ID != ids[i] || tp.Checkpoint.ChannelValues["a"] != "a of "+thread || tp.Checkpoint.ChannelValues["b"] != "new" {
			t.Errorf("writer %d: stored %+v", i, tp)
		}
	}
}

// TestGroupCommitSQLite: 16 writers on 16 threads, 15 of them arriving
// while the first commits, are committed by one group; the one whose
// parent is missing fails alone, the others are stored.
func TestGroupCommitSQLite(t *testing.T) {
	path := filepath.Join(t.TempDir(), "g.db")
	s, err := sqlitesaver.Open(t.Context(), path, sqlitesaver.Options{GroupCommit: 64})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	const missing = 7
	errs, firsts, ids := runGroup(t, s, s.Saver, missing, holdSQLite(t, path))
	db, err := sqlitedb.Open(path, sqlitedb.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	checkGroup(t, s, missing, errs, firsts, ids, func(thread string) (n int) {
		if err := db.Reader().QueryRow(`SELECT count(*) FROM checkpoint_blobs WHERE thread_id = ? AND channel = 'b'`, thread).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	})
}

// holdSQLite holds the write lock of the file at path (the process's
// writer semaphore, which the saver shares) until release.
func holdSQLite(t *testing.T, path string) func() func() {
	return func() func() {
		db, err := sqlitedb.Open(path, sqlitedb.Options{})
		if err != nil {
			t.Fatal(err)
		}
		tx, err := db.Begin(t.Context(), true)
		if err != nil {
			t.Fatal(err)
		}
		return func() {
			_ = tx.Rollback()
			db.Close()
		}
	}
}

// TestGroupCommitPostgres is TestGroupCommitSQLite on PostgreSQL, where
// the 14 checkpoints the group stored are checked to share one
// transaction (their rows' xmin).
func TestGroupCommitPostgres(t *testing.T) {
	pool := pgtest.Pool(t)
	// One flight: the 15 arrive while writer 0's commit is the one in
	// flight.
	s, err := pgsaver.New(pool, pgsaver.Options{GroupCommit: 64, GroupCommitFlights: 1})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Setup(t.Context()); err != nil {
		t.Fatal(err)
	}
	const missing = 7
	hold := func() func() {
		// Writer 0's put locks its parent FOR KEY SHARE: a transaction
		// holding it FOR UPDATE keeps the put waiting.
		tx, err := pool.Begin(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tx.Exec(t.Context(), `SELECT 1 FROM checkpoints WHERE thread_id = 'g-0' FOR UPDATE`); err != nil {
			t.Fatal(err)
		}
		return func() { _ = tx.Rollback(context.Background()) }
	}
	errs, firsts, ids := runGroup(t, s, s.Saver, missing, hold)
	checkGroup(t, s, missing, errs, firsts, ids, func(thread string) (n int) {
		if err := pool.QueryRow(t.Context(), `SELECT count(*) FROM checkpoint_blobs WHERE thread_id = $1 AND channel = 'b'`, thread).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	})
	var group []string
	for i, id := range ids {
		if i != 0 && i != missing {
			group = append(group, id)
		}
	}
	var txs int
	if err := pool.QueryRow(t.Context(), `SELECT count(DISTINCT xmin::text) FROM checkpoints
		WHERE checkpoint_id = ANY($1)`, group).Scan(&txs); err != nil {
		t.Fatal(err)
	}
	if txs != 1 {
		t.Errorf("the group's %d checkpoints were stored by %d transactions, want 1", groupWriters-2, txs)
	}
}

// TestGroupCommitCancelQueued: a writer whose context ends while its
// write waits gets the context's error, and its write is never stored.
func TestGroupCommitCancelQueued(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.db")
	s, err := sqlitesaver.Open(t.Context(), path, sqlitesaver.Options{GroupCommit: 64})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	cfg0, cfg1 := first(t, s, "c-0"), first(t, s, "c-1")
	release := holdSQLite(t, path)()
	done := make(chan error, 2)
	go func() {
		cp, nv := second()
		_, err := s.Put(context.Background(), cfg0, cp, nil, nv)
		done <- err
	}()
	waitBusy(t, s.Saver) // writer 0 in flight first
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		cp, nv := second()
		_, err := s.Put(ctx, cfg1, cp, nil, nv)
		done <- err
	}()
	waitQueued(t, s.Saver, 1)
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("the cancelled writer: %v, want context.Canceled", err)
	}
	release()
	if err := <-done; err != nil {
		t.Fatalf("writer 0: %v", err)
	}
	tp, err := s.GetTuple(t.Context(), checkpointer.Config{ThreadID: "c-1"})
	if err != nil {
		t.Fatal(err)
	}
	if tp.Checkpoint.ID != cfg1.CheckpointID {
		t.Fatalf("the cancelled write was stored: %s", tp.Checkpoint.ID)
	}
	// The committer is free again: a write commits (the bound only
	// turns a stuck committer into a failure instead of a hang).
	wctx, stop := context.WithTimeout(context.Background(), time.Minute)
	defer stop()
	cp, nv := second()
	if _, err := s.Put(wctx, cfg1, cp, nil, nv); err != nil {
		t.Fatalf("a write after the cancelled one: %v", err)
	}
}

// TestWithSerdeKeepsGroupCommit: a saver WithSerde makes is the same
// saver with another serializer, so its writes go through the same group
// committer (it had none: every write committed alone).
func TestWithSerdeKeepsGroupCommit(t *testing.T) {
	s, err := sqlitesaver.Open(t.Context(), filepath.Join(t.TempDir(), "w.db"), sqlitesaver.Options{GroupCommit: 64})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if got := s.Saver.WithSerde(nil).GroupCommit(); got != 64 {
		t.Errorf("WithSerde: GroupCommit() = %d, want 64 as the saver it came from", got)
	}
}
