package redissaver

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/memvault/memvault/backends/redis/redistest"
	"github.com/memvault/memvault/checkpointer"
)

// TestLongThreadIDNotEchoed: a removal takes a thread id of any length (a
// thread an earlier version stored must stay reachable), and the errors
// of its lock — held by another process, waited on too long, lost —
// quoted the id whole: a 64 KiB line bound for logs. They name it by its
// length and the limit now (checkpointer.NameID).
func TestLongThreadIDNotEchoed(t *testing.T) {
	srv := redistest.Shared(t, 8)
	s, err := New(srv.Client(t), Options{Prefix: redistest.Prefix(), Lease: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	huge := strings.Repeat("S", 64<<10)
	check := func(name string, err error, want error) {
		t.Helper()
		if err == nil || (want != nil && !errors.Is(err, want)) {
			t.Fatalf("%s: %v, want %v", name, err, want)
		}
		msg := err.Error()
		if strings.Contains(msg, huge[:64]) || len(msg) > 1000 {
			t.Errorf("%s: the id's text is echoed (%d bytes): %.300s", name, len(msg), msg)
		}
		if !strings.Contains(msg, strconv.Itoa(len(huge))+" bytes") || !strings.Contains(msg, strconv.Itoa(checkpointer.MaxIDBytes)) {
			t.Errorf("%s: the error does not name the thread by its length and the limit: %.300s", name, msg)
		}
	}
	k := s.d.keys(huge)
	if err := s.d.rdb.Set(ctx, k.lock, "another process", time.Minute).Err(); err != nil {
		t.Fatal(err)
	}
	defer s.d.rdb.Del(ctx, k.lock)

	// Held by another process: the removal waits until its context ends.
	wait, cancel := context.WithTimeout(ctx, 150*time.Millisecond)
	err = s.DeleteThread(wait, huge)
	cancel()
	check("DeleteThread of a locked thread", err, context.DeadlineExceeded)

	// Holding a lock already, an Update waits at most the lease.
	err = s.d.Update(ctx, func(dtx checkpointer.DriverTx) error {
		if err := dtx.(*tx).touch(ctx, "a-short-one"); err != nil {
			return err
		}
		return dtx.(*tx).touch(ctx, huge)
	})
	check("a second lock", err, ErrLockWait)

	// A lease that ran out.
	check("a lost lease", replyErr(huge, replyLost), ErrLockLost)

	// Within the limit, the thread is quoted.
	if err := replyErr("short", replyLost); !strings.Contains(err.Error(), `thread "short"`) {
		t.Errorf("a lost lease of a short thread: %v", err)
	}
}
