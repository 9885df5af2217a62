package pgsaver

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/checkpointer/engine"
	"github.com/memvault/memvault/memvaulttest/pgtest"
)

// afterLockDriver is the PostgreSQL driver with a hook run in a removal's
// transaction right after DriverTx.Lock returned: what another session
// commits in between is what a real concurrent writer may commit there.
type afterLockDriver struct {
	*driver
	afterLock func()
}

func (d afterLockDriver) Update(ctx context.Context, fn func(checkpointer.DriverTx) error) error {
	return d.driver.Update(ctx, func(tx checkpointer.DriverTx) error { return fn(afterLockTx{tx, d.afterLock}) })
}

type afterLockTx struct {
	checkpointer.DriverTx
	after func()
}

func (t afterLockTx) Lock(ctx context.Context, rs []checkpointer.Removal, sel checkpointer.HeadSelector) ([]checkpointer.Head, error) {
	hs, err := t.DriverTx.Lock(ctx, rs, sel)
	if err == nil && t.after != nil {
		t.after()
	}
	return hs, err
}

// TestSweepIdleKeepsPutCommittedAfterLock: a sweep finds a thread idle
// and locks its checkpoints; a put that continues none of them (a new
// namespace, no parent) commits before the sweep deletes the thread. The
// thread is no longer idle: the new checkpoint must stay, as it did when
// the idle test ran in the deleting statement (before the driver seam).
func TestSweepIdleKeepsPutCommittedAfterLock(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.Pool(t)
	s, err := New(pool, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Setup(ctx); err != nil {
		t.Fatal(err)
	}
	const thread = "idle-then-resumed"
	old := checkpointer.IDFloor(time.Now().Add(-48 * time.Hour))[:19] + "8000-000000000001"
	if !checkpointer.IsDatableID(old) {
		t.Fatalf("%s is not datable", old)
	}
	cp := &checkpointer.Checkpoint{V: 4, ID: old, TS: time.Now().UTC(), ChannelValues: map[string]any{"a": "x"},
		ChannelVersions: map[string]string{"a": "1"}, VersionsSeen: map[string]map[string]string{}}
	if _, err := s.Put(ctx, checkpointer.Config{ThreadID: thread}, cp, nil, map[string]string{"a": "1"}); err != nil {
		t.Fatal(err)
	}
	fresh := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(0), TS: time.Now().UTC(), ChannelValues: map[string]any{"b": "y"},
		ChannelVersions: map[string]string{"b": "1"}, VersionsSeen: map[string]map[string]string{}}
	var putErr error
	put := func() {
		_, putErr = s.Put(ctx, checkpointer.Config{ThreadID: thread, CheckpointNS: "sub"}, fresh, nil, map[string]string{"b": "1"})
	}
	e, err := engine.New(afterLockDriver{&driver{db: pool, q: &s.q, own: true}, put}, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := e.Sweep(ctx, checkpointer.RetentionPolicy{IdleTTL: time.Hour}, checkpointer.SweepOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if putErr != nil {
		t.Fatalf("concurrent put: %v", putErr)
	}
	got, err := s.GetTuple(ctx, checkpointer.Config{ThreadID: thread, CheckpointNS: "sub"})
	if err != nil {
		t.Fatal(err)
	}
	if got == nil || got.Checkpoint.ChannelValues["b"] != "y" {
		t.Fatalf("sweep %s deleted checkpoint %s, put (and committed) after the sweep locked the idle thread: got %v",
			fmt.Sprintf("%+v", rep), fresh.ID, got)
	}
}
