package redissaver

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/memvault/memvault/backends/redis/redistest"
	"github.com/memvault/memvault/checkpointer"
)

// TestReviewS26RollbackWithoutRestore (session 26 review): an Update that
// fails is rolled back by one script per thread that DELs every key of
// the thread, then RESTOREs each from its DUMP. RESTORE is in Redis's
// @dangerous ACL category, which hardened deployments remove ("+@all
// -@dangerous"; the README lists MULTI, EXEC, RENAME, SET and HDEL as
// what the saver needs, not DUMP or RESTORE). Without it the script
// stops at its first RESTORE with NOPERM after its DELs ran (a Lua
// script keeps what it wrote): a removal of one checkpoint that fails
// ends with the whole thread deleted. Every other operation of the saver
// works under that ACL. Want: the rollback never deletes what it cannot
// restore (RESTORE checked before any DEL, e.g. RESTORE to a scratch key
// of the slot first, or ACL DRYRUN at New), and the ACL needs documented.
func TestReviewS26RollbackWithoutRestore(t *testing.T) {
	srv := redistest.Shared(t, 8)
	ctx := context.Background()
	admin := srv.Client(t)
	user := "s26" + redistest.Prefix()
	if err := admin.Do(ctx, "ACL", "SETUSER", user, "on", ">pw", "~*", "&*", "+@all", "-@dangerous").Err(); err != nil {
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
			t.Fatalf("put under -@dangerous: %v", err)
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
		return boom // the removal of one checkpoint fails after its change
	})
	t.Logf("failed Update: %v", err)
	n := 0
	for _, err := range s.List(ctx, &checkpointer.Config{ThreadID: "t"}, checkpointer.ListOptions{}) {
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	if n != 2 {
		t.Errorf("after a failed removal of one checkpoint (rolled back under an ACL without RESTORE) the thread holds %d checkpoints, want its 2", n)
	}
}
