package pgsaver_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/checkpointer/pgsaver"
	"github.com/memvault/memvault/memvaulttest/pgtest"
)

// New does not connect: a saver can be built at start-up and its input
// checks run before any I/O. Here the pool points at a server that is never
// contacted.
func ExampleNew() {
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, "postgres://memvault@127.0.0.1:1/none")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer pool.Close()

	saver, err := pgsaver.New(pool, pgsaver.Options{VersionStyle: checkpointer.VersionInt})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(saver.NextVersion(""), saver.NextVersion("41"))

	_, err = saver.GetTuple(ctx, checkpointer.Config{ThreadID: "a\x00b"})
	fmt.Println(errors.Is(err, checkpointer.ErrInvalidID))
	// Output:
	// 1 42
	// true
}

// The whole life of a thread against a real database (pgx pool from
// TEST_DATABASE_URL or any DSN). Not run: it needs a server.
func ExampleSaver() {
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, "postgres://localhost/app")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer pool.Close()
	saver, err := pgsaver.New(pool, pgsaver.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := saver.Setup(ctx); err != nil {
		fmt.Println(err)
		return
	}
	cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(0), TS: time.Now(),
		ChannelValues:   map[string]any{"messages": []any{"hello"}},
		ChannelVersions: map[string]string{"messages": saver.NextVersion("")}}
	cfg, err := saver.Put(ctx, checkpointer.Config{ThreadID: "thread-1"}, cp, checkpointer.Metadata{"step": 0}, cp.ChannelVersions)
	if err != nil {
		fmt.Println(err)
		return
	}
	for t, err := range saver.List(ctx, &cfg, checkpointer.ListOptions{Limit: 10}) {
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(t.Config.CheckpointID, t.Checkpoint.ChannelValues["messages"])
	}
}

// TestPackageDocSample runs the usage sample of the package documentation.
func TestPackageDocSample(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.Pool(t)

	saver, err := pgsaver.New(pool, pgsaver.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := saver.Setup(ctx); err != nil {
		t.Fatal(err)
	}
	cp := &checkpointer.Checkpoint{
		V: 4, ID: checkpointer.NewID(0), TS: time.Now(),
		ChannelValues:   map[string]any{"messages": []any{"hello"}},
		ChannelVersions: map[string]string{"messages": saver.NextVersion("")},
	}
	cfg, err := saver.Put(ctx, checkpointer.Config{ThreadID: "thread-1"}, cp,
		checkpointer.Metadata{"source": "input", "step": -1}, cp.ChannelVersions)
	if err != nil {
		t.Fatal(err)
	}
	latest, err := saver.GetTuple(ctx, checkpointer.Config{ThreadID: "thread-1"})
	if err != nil {
		t.Fatal(err)
	}
	wantJSON(t, "values", latest.Checkpoint.ChannelValues, `{"messages":["hello"]}`)
	n := 0
	for tu, err := range saver.List(ctx, &cfg, checkpointer.ListOptions{Limit: 10}) {
		if err != nil {
			t.Fatal(err)
		}
		if tu.Config.ThreadID != cfg.ThreadID || tu.Config.CheckpointID != cfg.CheckpointID {
			t.Errorf("listed %+v, want %+v", tu.Config, cfg)
		}
		n++
	}
	if n != 1 {
		t.Errorf("listed %d", n)
	}
}
