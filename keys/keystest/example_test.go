package keystest_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/checkpointer/memsaver"
	"github.com/memvault/memvault/keys"
	"github.com/memvault/memvault/keys/keystest"
	"github.com/memvault/memvault/keys/memkeys"
	"github.com/memvault/memvault/serde"
)

// A key table's conformance test: Run needs the *testing.T of a Test
// function (it runs subtests), so this example is compiled, not run; the
// memory, SQLite and PostgreSQL tables run it in their own tests.
func ExampleRun() {
	_ = func(t *testing.T) {
		keystest.Run(t, func(t *testing.T) keys.Table { return memkeys.New() })
	}
}

// Two hierarchies over one key table stand for two processes sharing it:
// a thread one process sealed, the other reads; once the subject's keys
// are destroyed, a process that meets them afresh reads nothing. The
// example passes a zero testing.T, as memvaulttest/testkeys's does:
// NewHierarchy uses it only to fail, which a fixed key never does (a
// failure would stop the example loudly, not pass it).
func ExampleNewHierarchy() {
	ctx := context.Background()
	table := memkeys.New()
	sub := keys.Subjects{ThreadSeparator: ":"}
	procA := keystest.NewHierarchy(&testing.T{}, table, sub)
	procB := keystest.NewHierarchy(&testing.T{}, table, sub)

	saverA, err := memsaver.New(memsaver.Options{Serde: procA})
	if err != nil {
		fmt.Println(err)
		return
	}
	cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(0),
		ChannelValues: map[string]any{"notes": "private"}, ChannelVersions: map[string]string{"notes": "1"}}
	cfg := checkpointer.Config{ThreadID: "carol:visit-1"}
	if _, err := saverA.Put(ctx, cfg, cp, nil, cp.ChannelVersions); err != nil {
		fmt.Println(err)
		return
	}
	tup, err := saverA.WithSerde(procB).GetTuple(ctx, cfg)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(tup.Checkpoint.ChannelValues["notes"])

	if _, err := procA.DestroyKeys(ctx, "carol"); err != nil {
		fmt.Println(err)
		return
	}
	procC := keystest.NewHierarchy(&testing.T{}, table, sub)
	_, err = saverA.WithSerde(procC).GetTuple(ctx, cfg)
	fmt.Println(errors.Is(err, serde.ErrDecrypt))
	// Output:
	// private
	// true
}
