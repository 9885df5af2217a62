package redissaver

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/memvault/memvault/backends/redis/redistest"
	"github.com/memvault/memvault/checkpointer"
)

// putTwo stores two checkpoints on thread "t" of a new saver (the second
// continuing the first, with a pending write) and returns the saver.
func putTwo(t *testing.T) *Saver {
	t.Helper()
	srv := redistest.Shared(t, 8)
	s, err := New(srv.Client(t), Options{Prefix: redistest.Prefix()})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	cfg := checkpointer.Config{ThreadID: "t"}
	v := ""
	for n := range 2 {
		v = s.NextVersion(v)
		cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(n), TS: time.Now(),
			ChannelValues: map[string]any{"n": float64(n)}, ChannelVersions: map[string]string{"n": v}}
		if cfg, err = s.Put(ctx, cfg, cp, checkpointer.Metadata{"step": n}, cp.ChannelVersions); err != nil {
			t.Fatal(err)
		}
		if err := s.PutWrites(ctx, cfg, []checkpointer.Write{{Channel: "out", Value: float64(n)}}, "task", ""); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

// dumpThread is every row of thread "t".
func dumpThread(t *testing.T, s *Saver) *checkpointer.ThreadRows {
	t.Helper()
	var rows *checkpointer.ThreadRows
	err := s.d.Update(context.Background(), func(tx checkpointer.DriverTx) error {
		var err error
		rows, err = tx.Rows(context.Background(), "t")
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

// TestUpdateRollsBack: Redis has no rollback, so Update makes one: when
// its function fails after changing a thread (a removal, then a deletion
// of the whole thread), the thread is back as it was, and listed again.
func TestUpdateRollsBack(t *testing.T) {
	s := putTwo(t)
	ctx := context.Background()
	before := dumpThread(t, s)
	boom := errors.New("boom")
	err := s.d.Update(ctx, func(tx checkpointer.DriverTx) error {
		heads, err := tx.Heads(ctx, checkpointer.HeadSelector{Threads: []string{"t"}})
		if err != nil {
			return err
		}
		rs := []checkpointer.Removal{{Thread: "t", NS: "", IDs: []string{heads[0].ID}}}
		if _, err := tx.Lock(ctx, rs, checkpointer.HeadSelector{Threads: []string{"t"}}); err != nil {
			return err
		}
		if _, err := tx.Remove(ctx, rs, false); err != nil {
			return err
		}
		if _, err := tx.DeleteThreads(ctx, []string{"t"}, false); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("Update: %v, want boom", err)
	}
	after := dumpThread(t, s)
	if len(after.Checkpoints) != len(before.Checkpoints) || len(after.Values) != len(before.Values) || len(after.Writes) != len(before.Writes) {
		t.Fatalf("after a failed Update the thread holds %d checkpoints, %d values, %d writes; want %d, %d, %d",
			len(after.Checkpoints), len(after.Values), len(after.Writes), len(before.Checkpoints), len(before.Values), len(before.Writes))
	}
	n := 0
	for ti, err := range s.ListThreads(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		if ti.ThreadID == "t" && ti.Checkpoints == 2 {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("the restored thread is listed %d times with its 2 checkpoints, want once", n)
	}
	// The locks are released: a put goes through.
	if _, err := s.GetTuple(ctx, checkpointer.Config{ThreadID: "t"}); err != nil {
		t.Fatal(err)
	}
}

// TestUpdateLeaseLost: a change an Update makes after its lease ran out
// and another writer took the thread is refused with ErrLockLost, and
// changes nothing.
func TestUpdateLeaseLost(t *testing.T) {
	s := putTwo(t)
	ctx := context.Background()
	before := dumpThread(t, s)
	k := s.d.keys("t")
	err := s.d.Update(ctx, func(dtx checkpointer.DriverTx) error {
		if _, err := dtx.DeleteThreads(ctx, []string{"t"}, true); err != nil { // counts only: no lock yet
			return err
		}
		if err := dtx.(*tx).touch(ctx, "t"); err != nil {
			return err
		}
		// As if the lease had run out and another Update held the thread.
		if err := s.d.rdb.Set(ctx, k.lock, "someone else", 0).Err(); err != nil {
			return err
		}
		_, err := dtx.DeleteThreads(ctx, []string{"t"}, false)
		return err
	})
	if !errors.Is(err, ErrLockLost) {
		t.Fatalf("Update after losing its lease: %v, want ErrLockLost", err)
	}
	if err := s.d.rdb.Del(ctx, k.lock).Err(); err != nil {
		t.Fatal(err)
	}
	if after := dumpThread(t, s); len(after.Checkpoints) != len(before.Checkpoints) {
		t.Fatalf("the thread holds %d checkpoints after the refused change, want %d", len(after.Checkpoints), len(before.Checkpoints))
	}
}

// TestRollbackRestoreRefused: when the server stops letting the saver
// RESTORE between an Update's save and its rollback (an ACL changed to
// "+@all -@dangerous" meanwhile), the failed rollback leaves the thread
// as the Update's change left it — one checkpoint removed — and says so,
// rather than deleting the thread before its first RESTORE is refused;
// no hold key stays behind. The probe passed when the Update started, so
// this is the rollback script's own guarantee.
func TestRollbackRestoreRefused(t *testing.T) {
	for _, v := range []int{7, 8} {
		t.Run(fmt.Sprint("redis", v), func(t *testing.T) { rollbackRestoreRefused(t, v) })
	}
}

func rollbackRestoreRefused(t *testing.T, version int) {
	srv := redistest.Shared(t, version)
	ctx := context.Background()
	admin := srv.Client(t)
	user := "rb" + redistest.Prefix()
	if err := admin.Do(ctx, "ACL", "SETUSER", user, "on", ">pw", "~*", "&*", "+@all").Err(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = admin.Do(context.Background(), "ACL", "DELUSER", user).Err() })
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr, Username: user, Password: "pw"})
	t.Cleanup(func() { _ = rdb.Close() })
	prefix := redistest.Prefix()
	s, err := New(rdb, Options{Prefix: prefix})
	if err != nil {
		t.Fatal(err)
	}
	cfg := checkpointer.Config{ThreadID: "t"}
	v := ""
	for n := range 2 {
		v = s.NextVersion(v)
		cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(n), TS: time.Now(),
			ChannelValues: map[string]any{"n": float64(n)}, ChannelVersions: map[string]string{"n": v}}
		if cfg, err = s.Put(ctx, cfg, cp, checkpointer.Metadata{"step": n}, cp.ChannelVersions); err != nil {
			t.Fatal(err)
		}
		if err := s.PutWrites(ctx, cfg, []checkpointer.Write{{Channel: "out", Value: float64(n)}}, "task", ""); err != nil {
			t.Fatal(err)
		}
	}
	boom := errors.New("boom")
	err = s.d.Update(ctx, func(tx checkpointer.DriverTx) error {
		heads, err := tx.Heads(ctx, checkpointer.HeadSelector{Threads: []string{"t"}})
		if err != nil {
			return err
		}
		rs := []checkpointer.Removal{{Thread: "t", NS: "", IDs: []string{heads[0].ID}}}
		if _, err := tx.Lock(ctx, rs, checkpointer.HeadSelector{Threads: []string{"t"}}); err != nil {
			return err
		}
		if _, err := tx.Remove(ctx, rs, false); err != nil {
			return err
		}
		if err := admin.Do(ctx, "ACL", "SETUSER", user, "-@dangerous").Err(); err != nil {
			t.Error(err)
		}
		return boom
	})
	if !errors.Is(err, boom) || !strings.Contains(err.Error(), "restoring the threads after the failure") {
		t.Errorf("Update = %v, want boom joined with the failed rollback's error", err)
	}
	n := 0
	for _, err := range s.List(ctx, &checkpointer.Config{ThreadID: "t"}, checkpointer.ListOptions{}) {
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	if n != 1 {
		t.Errorf("after a rollback refused its RESTORE the thread holds %d checkpoints, want the 1 the removal left", n)
	}
	holds, err := admin.Keys(ctx, prefix+"*"+sep+"*").Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range holds {
		if strings.HasSuffix(h, sep+"rollback") {
			t.Errorf("hold key %q left behind", h)
		}
	}
}

// TestRollbackRestrictedACL: under the grant the package doc proposes for
// hardened servers, "+@all -@dangerous +restore", a failed Update
// (a removal, then a deletion of the whole thread) is rolled back whole.
func TestRollbackRestrictedACL(t *testing.T) {
	srv := redistest.Shared(t, 8)
	ctx := context.Background()
	admin := srv.Client(t)
	user := "acl" + redistest.Prefix()
	if err := admin.Do(ctx, "ACL", "SETUSER", user, "on", ">pw", "~*", "&*", "+@all", "-@dangerous", "+restore").Err(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = admin.Do(context.Background(), "ACL", "DELUSER", user).Err() })
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr, Username: user, Password: "pw"})
	t.Cleanup(func() { _ = rdb.Close() })
	s, err := New(rdb, Options{Prefix: redistest.Prefix()})
	if err != nil {
		t.Fatal(err)
	}
	cfg := checkpointer.Config{ThreadID: "t"}
	v := ""
	for n := range 2 {
		v = s.NextVersion(v)
		cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(n), TS: time.Now(),
			ChannelValues: map[string]any{"n": float64(n)}, ChannelVersions: map[string]string{"n": v}}
		if cfg, err = s.Put(ctx, cfg, cp, checkpointer.Metadata{"step": n}, cp.ChannelVersions); err != nil {
			t.Fatal(err)
		}
		if err := s.PutWrites(ctx, cfg, []checkpointer.Write{{Channel: "out", Value: float64(n)}}, "task", ""); err != nil {
			t.Fatal(err)
		}
	}
	boom := errors.New("boom")
	err = s.d.Update(ctx, func(tx checkpointer.DriverTx) error {
		heads, err := tx.Heads(ctx, checkpointer.HeadSelector{Threads: []string{"t"}})
		if err != nil {
			return err
		}
		rs := []checkpointer.Removal{{Thread: "t", NS: "", IDs: []string{heads[0].ID}}}
		if _, err := tx.Lock(ctx, rs, checkpointer.HeadSelector{Threads: []string{"t"}}); err != nil {
			return err
		}
		if _, err := tx.Remove(ctx, rs, false); err != nil {
			return err
		}
		if _, err := tx.DeleteThreads(ctx, []string{"t"}, false); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) || strings.Contains(err.Error(), "restoring") {
		t.Fatalf("Update = %v, want boom alone (rolled back)", err)
	}
	n := 0
	for tu, err := range s.List(ctx, &checkpointer.Config{ThreadID: "t"}, checkpointer.ListOptions{}) {
		if err != nil {
			t.Fatal(err)
		}
		if len(tu.PendingWrites) != 1 {
			t.Errorf("checkpoint %s holds %d pending writes, want 1", tu.Config.CheckpointID, len(tu.PendingWrites))
		}
		n++
	}
	if n != 2 {
		t.Errorf("after the rollback the thread holds %d checkpoints, want 2", n)
	}
}
