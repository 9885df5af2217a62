package redissaver

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/memvault/memvault/backends/redis/redistest"
	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/memvaulttest/childproc"
)

// holdSpec tells TestHelperHoldThread what to hold.
type holdSpec struct{ Addr, Prefix, Thread, NS, ID string }

// TestHelperHoldThread is the other process of TestTwoProcesses: it
// locks a checkpoint for removal, says "locked", waits for its stdin to
// close, removes the checkpoint and ends its Update.
func TestHelperHoldThread(t *testing.T) {
	var h holdSpec
	if !childproc.Arg(t, &h) {
		t.Skip("the other process of TestTwoProcesses")
	}
	ctx := context.Background()
	rdb := redis.NewClient(&redis.Options{Addr: h.Addr})
	defer func() { _ = rdb.Close() }()
	d := newDriver(rdb, h.Prefix, DefaultLease)
	err := d.Update(ctx, func(tx checkpointer.DriverTx) error {
		rs := []checkpointer.Removal{{Thread: h.Thread, NS: h.NS, IDs: []string{h.ID}}}
		if _, err := tx.Lock(ctx, rs, checkpointer.HeadSelector{Threads: []string{h.Thread}}); err != nil {
			return err
		}
		childproc.Say("locked")
		<-childproc.StdinClosed()
		_, err := tx.Remove(ctx, rs, false)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestTwoProcesses: while another process holds a checkpoint it is
// removing, a put continuing that checkpoint (inheriting one of its
// values) waits, and when the removal commits it stores nothing and
// fails with ErrParentMissing. Without the lock the put would land in
// the middle of the removal, which decided on heads that did not have
// it, and the new checkpoint's parent would be deleted under it.
func TestTwoProcesses(t *testing.T) {
	srv := redistest.Shared(t, 8)
	prefix := redistest.Prefix()
	s, err := New(srv.Client(t), Options{Prefix: prefix})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	v1 := s.NextVersion("")
	c1 := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(0), TS: time.Now(),
		ChannelValues:   map[string]any{"a": "kept", "b": "first"},
		ChannelVersions: map[string]string{"a": v1, "b": v1}}
	cfg1, err := s.Put(ctx, checkpointer.Config{ThreadID: "t"}, c1, checkpointer.Metadata{"step": 0}, c1.ChannelVersions)
	if err != nil {
		t.Fatal(err)
	}

	child := childproc.Start(t, "TestHelperHoldThread", holdSpec{Addr: srv.Addr, Prefix: prefix, Thread: "t", NS: "", ID: c1.ID})
	locked := false
	for line := range child.Lines {
		if line == "locked" {
			locked = true
			break
		}
	}
	if !locked {
		_ = child.Wait()
		t.Fatal("the other process ended before locking")
	}

	waited := make(chan struct{})
	var once sync.Once
	s.d.onWait = func() { once.Do(func() { close(waited) }) }
	v2 := s.NextVersion(v1)
	c2 := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(1), TS: time.Now(),
		ChannelValues:   map[string]any{"a": "kept", "b": "second"},
		ChannelVersions: map[string]string{"a": v1, "b": v2}}
	res := make(chan error, 1)
	go func() {
		_, err := s.Put(ctx, cfg1, c2, checkpointer.Metadata{"step": 1}, map[string]string{"b": v2})
		res <- err
	}()
	select {
	case <-waited:
	case err := <-res:
		_ = child.Wait()
		t.Fatalf("a put continuing a checkpoint another process holds for removal returned (%v) without waiting", err)
	}
	child.CloseStdin() // go on: remove and commit
	err = <-res
	if werr := child.Wait(); werr != nil {
		var rest []string
		for line := range child.Lines {
			rest = append(rest, line)
		}
		t.Fatalf("the other process: %v\n%s", werr, strings.Join(rest, "\n"))
	}
	if !errors.Is(err, checkpointer.ErrParentMissing) {
		t.Fatalf("put after the other process removed its parent: %v, want ErrParentMissing", err)
	}
	tup, err := s.GetTuple(ctx, checkpointer.Config{ThreadID: "t"})
	if err != nil || tup != nil {
		t.Fatalf("the thread after the removal and the refused put: %+v, %v; want nothing", tup, err)
	}
}
