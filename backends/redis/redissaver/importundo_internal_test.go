package redissaver

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/memvault/memvault/backends/redis/redistest"
	"github.com/memvault/memvault/checkpointer"
)

// dumpCounter counts the DUMP commands a client sends.
type dumpCounter struct{ n atomic.Int64 }

func (c *dumpCounter) DialHook(next redis.DialHook) redis.DialHook { return next }

func (c *dumpCounter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		c.count(cmd)
		return next(ctx, cmd)
	}
}

func (c *dumpCounter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		for _, cmd := range cmds {
			c.count(cmd)
		}
		return next(ctx, cmds)
	}
}

func (c *dumpCounter) count(cmd redis.Cmder) {
	if strings.EqualFold(cmd.Name(), "dump") {
		c.n.Add(1)
	}
}

// TestImportSavesNoThreadWhole: an import of a few checkpoints and
// writes into a thread — each batch checkpointer/durable writes in its
// async and exit modes — saves for its rollback only the fields it
// writes, not the thread's keys whole (found by review: every batch
// DUMPed the whole thread to the client, so a 6 MB thread cost each
// async step ~250 KB from the server, 6–24× slower than synchronous puts,
// and a long thread's writes were quadratic).
func TestImportSavesNoThreadWhole(t *testing.T) {
	ctx := context.Background()
	rdb := redistest.Shared(t, 8).Client(t)
	dumps := &dumpCounter{}
	rdb.AddHook(dumps)
	s, err := New(rdb, Options{Prefix: redistest.Prefix()})
	if err != nil {
		t.Fatal(err)
	}
	cfg := checkpointer.Config{ThreadID: "t"}
	v := ""
	for n := range 3 {
		v = s.NextVersion(v)
		cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(n), ChannelValues: map[string]any{"n": strings.Repeat("x", 1000)},
			ChannelVersions: map[string]string{"n": v}}
		if cfg, err = s.Put(ctx, cfg, cp, nil, cp.ChannelVersions); err != nil {
			t.Fatal(err)
		}
	}
	before := dumps.n.Load()
	v = s.NextVersion(v)
	cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(3), ChannelValues: map[string]any{"n": "next"}, ChannelVersions: map[string]string{"n": v}}
	err = s.ImportThread(ctx, []checkpointer.ImportCheckpoint{
		{ThreadID: "t", ID: cfg.CheckpointID, Writes: []checkpointer.ImportWrites{{TaskID: "task", Writes: []checkpointer.Write{{Channel: "n", Value: "w"}}}}},
		{ThreadID: "t", ID: cp.ID, ParentID: cfg.CheckpointID, Checkpoint: cp, NewVersions: cp.ChannelVersions},
	})
	if err != nil {
		t.Fatal(err)
	}
	if n := dumps.n.Load() - before; n != 0 {
		t.Fatalf("an import of one checkpoint and one task's writes sent %d DUMPs of the thread's keys, want none", n)
	}
}

// TestImportRollsBackFields: an import that fails after changing a thread
// (a put whose parent is missing, after pending writes, a new checkpoint
// and a put rewriting a stored one) leaves the thread exactly as it was,
// and a thread the import made new is neither listed nor found.
func TestImportRollsBackFields(t *testing.T) {
	s := putTwo(t)
	ctx := context.Background()
	before := dumpThread(t, s)
	if len(before.Checkpoints) != 2 || len(before.Values) != 2 || len(before.Writes) != 2 {
		t.Fatalf("the thread holds %d checkpoints, %d values, %d writes; want 2 of each", len(before.Checkpoints), len(before.Values), len(before.Writes))
	}
	latest, err := s.GetTuple(ctx, checkpointer.Config{ThreadID: "t"})
	if err != nil || latest == nil {
		t.Fatalf("GetTuple: %v, %v", latest, err)
	}
	head := latest.Config.CheckpointID
	v := s.NextVersion(latest.Checkpoint.ChannelVersions["n"])
	next := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(5), TS: time.Now(), ChannelValues: map[string]any{"n": "new"},
		ChannelVersions: map[string]string{"n": v}}
	rewrite := *latest.Checkpoint
	rewrite.ChannelValues = map[string]any{"n": "rewritten"}
	rewrite.ChannelVersions = map[string]string{"n": s.NextVersion(v)}
	orphan := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(6), TS: time.Now(), ChannelValues: map[string]any{},
		ChannelVersions: map[string]string{"n": "1"}} // inherits "n" from a parent that is not stored
	items := func(thread string) []checkpointer.ImportCheckpoint {
		return []checkpointer.ImportCheckpoint{
			{ThreadID: thread, ID: head, Writes: []checkpointer.ImportWrites{{TaskID: "task", Writes: []checkpointer.Write{{Channel: "out", Value: "changed"}}},
				{TaskID: "other", Writes: []checkpointer.Write{{Channel: "out", Value: "new"}}}}},
			{ThreadID: thread, ID: next.ID, ParentID: head, Checkpoint: next, Metadata: checkpointer.Metadata{"step": 5}, NewVersions: next.ChannelVersions},
			{ThreadID: thread, ID: head, Checkpoint: &rewrite, Metadata: checkpointer.Metadata{"step": 9}, NewVersions: rewrite.ChannelVersions},
			{ThreadID: thread, ID: orphan.ID, ParentID: "missing", Checkpoint: orphan, NewVersions: map[string]string{}},
		}
	}
	if err := s.ImportThread(ctx, items("t")); !errors.Is(err, checkpointer.ErrParentMissing) {
		t.Fatalf("import with a missing parent: %v, want checkpointer.ErrParentMissing", err)
	}
	if after := sortedRows(dumpThread(t, s)); !reflect.DeepEqual(after, sortedRows(before)) {
		t.Fatalf("after a failed import the thread holds\n%+v\nwant\n%+v", after, before)
	}
	if err := s.ImportThread(ctx, items("fresh")); !errors.Is(err, checkpointer.ErrParentMissing) {
		t.Fatalf("import into a new thread with a missing parent: %v, want checkpointer.ErrParentMissing", err)
	}
	if tp, err := s.GetTuple(ctx, checkpointer.Config{ThreadID: "fresh"}); tp != nil || err != nil {
		t.Fatalf("the thread a failed import made: %v, %v; want nothing", tp, err)
	}
	for id, err := range s.RowThreadIDs(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		if id == "fresh" {
			t.Fatal("the thread a failed import made holds rows")
		}
	}
}

// sortedRows is rows with its checkpoints, values and writes in one order
// (a hash's fields come in any order).
func sortedRows(rows *checkpointer.ThreadRows) *checkpointer.ThreadRows {
	key := func(parts ...string) string { return strings.Join(parts, "\x00") }
	slices.SortFunc(rows.Checkpoints, func(a, b checkpointer.PutRows) int { return strings.Compare(key(a.NS, a.ID), key(b.NS, b.ID)) })
	slices.SortFunc(rows.Values, func(a, b checkpointer.NamespacedValue) int {
		return strings.Compare(key(a.NS, a.Channel, a.Version), key(b.NS, b.Channel, b.Version))
	})
	slices.SortFunc(rows.Writes, func(a, b checkpointer.NamespacedWrite) int {
		return strings.Compare(key(a.NS, a.Checkpoint, a.Task, strconv.Itoa(a.Idx)), key(b.NS, b.Checkpoint, b.Task, strconv.Itoa(b.Idx)))
	})
	return rows
}
