package trpcagent_test

import (
	"context"
	"testing"

	"trpc.group/trpc-go/trpc-agent-go/graph"

	"github.com/memvault/memvault/adapters/trpcagent"
	"github.com/memvault/memvault/memvaulttest/adaptertest"
	"github.com/memvault/memvault/memvaulttest/pgtest"
	"github.com/memvault/memvault/store"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// backendStores opens each memvault backend's store (adaptertest), by name;
// files are the SQLite store's files.
func backendStores(t *testing.T, opt adaptertest.Options) (map[string]store.Store, []string) {
	t.Helper()
	out := map[string]store.Store{}
	var files []string
	for _, b := range adaptertest.Backends(t, opt) {
		out[b.Name] = b.Store(t)
		files = append(files, b.Files...)
	}
	return out, files
}

// savers opens each memvault backend (the SQL ones encrypted) as a tRPC
// checkpoint saver. The cases below port tRPC-Agent-Go's own tests of its
// in-memory saver (graph/checkpoint/inmemory), with JSON's numbers as its
// SQLite saver gives them.
func savers(t *testing.T) map[string]*trpcagent.CheckpointSaver {
	t.Helper()
	out := map[string]*trpcagent.CheckpointSaver{}
	for _, b := range adaptertest.Backends(t, adaptertest.Options{}) {
		c, err := trpcagent.New(b.Saver(t))
		must(t, err)
		out[b.Name] = c
	}
	return out
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func put(t *testing.T, s *trpcagent.CheckpointSaver, cfg map[string]any, values map[string]any, md *graph.CheckpointMetadata, parent string) (map[string]any, *graph.Checkpoint) {
	t.Helper()
	cp := graph.NewCheckpoint(values, map[string]int64{"counter": 1}, nil)
	cp.ParentCheckpointID = parent
	out, err := s.Put(context.Background(), graph.PutRequest{Config: cfg, Checkpoint: cp, Metadata: md, NewVersions: map[string]int64{"counter": 1}})
	must(t, err)
	return out, cp
}

func TestSaver(t *testing.T) {
	for name, s := range savers(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()

			// Put, Get, GetTuple (TestInMemoryCheckpointSaver).
			cfg := graph.CreateCheckpointConfig("lineage-a", "", "")
			md := graph.NewCheckpointMetadata(graph.CheckpointSourceInput, -1)
			got1, cp1 := put(t, s, cfg, map[string]any{"counter": 1}, md, "")
			if graph.GetCheckpointID(got1) != cp1.ID {
				t.Fatalf("Put returned %v, want the checkpoint's id %s", got1, cp1.ID)
			}
			back, err := s.Get(ctx, got1)
			must(t, err)
			if back == nil || back.ID != cp1.ID || back.ChannelValues["counter"] != float64(1) || back.ChannelVersions["counter"] != 1 {
				t.Fatalf("Get: %+v", back)
			}
			tup, err := s.GetTuple(ctx, got1)
			must(t, err)
			if tup.Metadata.Source != graph.CheckpointSourceInput || tup.Metadata.Step != -1 {
				t.Fatalf("metadata %+v", tup.Metadata)
			}

			// PutWrites (TestInMemoryCheckpointSaverWrites).
			must(t, s.PutWrites(ctx, graph.PutWritesRequest{Config: got1, TaskID: "task1",
				Writes: []graph.PendingWrite{{Channel: "counter", Value: 42}, {Channel: "message", Value: "hello"}}}))
			tup, err = s.GetTuple(ctx, got1)
			must(t, err)
			if len(tup.PendingWrites) != 2 || tup.PendingWrites[0].Value != float64(42) || tup.PendingWrites[1].Value != "hello" || tup.PendingWrites[1].TaskID != "task1" {
				t.Fatalf("writes %+v", tup.PendingWrites)
			}

			// PutFull: child of a parent in a namespace, writes of two tasks,
			// in one unit (TestInMemoryCheckpointSaverPutFull).
			nsCfg := graph.CreateCheckpointConfig("lineage-b", "", "ns")
			_, parent := put(t, s, nsCfg, map[string]any{"counter": 0}, graph.NewCheckpointMetadata(graph.CheckpointSourceInput, -1), "")
			child := graph.NewCheckpoint(map[string]any{"counter": 1}, map[string]int64{"counter": 2}, nil)
			child.ParentCheckpointID = parent.ID
			full, err := s.PutFull(ctx, graph.PutFullRequest{Config: nsCfg, Checkpoint: child, Metadata: graph.NewCheckpointMetadata(graph.CheckpointSourceLoop, 1),
				PendingWrites: []graph.PendingWrite{{Channel: "counter", Value: 42, TaskID: "task1", Sequence: 1}, {Channel: "message", Value: "m", TaskID: "task2", Sequence: 2}}})
			must(t, err)
			tup, err = s.GetTuple(ctx, full)
			must(t, err)
			if tup.Checkpoint.ID != child.ID || graph.GetCheckpointID(tup.ParentConfig) != parent.ID || graph.GetNamespace(tup.Config) != "ns" || tup.Metadata.Step != 1 {
				t.Fatalf("PutFull tuple %+v", tup)
			}
			if len(tup.PendingWrites) != 2 || tup.PendingWrites[0].TaskID != "task1" || tup.PendingWrites[1].Sequence != 2 {
				t.Fatalf("PutFull writes %+v", tup.PendingWrites)
			}

			// The latest (TestInMemoryCheckpointSaverGetLatest): tRPC's ids
			// are random, the latest is still the last put.
			latestCfg := graph.CreateCheckpointConfig("lineage-c", "", "ns")
			if none, err := s.Get(ctx, latestCfg); err != nil || none != nil {
				t.Fatalf("empty lineage: %v %v", none, err)
			}
			var last *graph.Checkpoint
			for i := range 3 {
				_, last = put(t, s, latestCfg, map[string]any{"step": i}, graph.NewCheckpointMetadata(graph.CheckpointSourceLoop, i), "")
			}
			latest, err := s.Get(ctx, latestCfg)
			must(t, err)
			if latest.ID != last.ID {
				t.Fatalf("latest %s, want %s", latest.ID, last.ID)
			}

			// Filters (TestInMemoryCheckpointSaverFilters).
			fCfg := graph.CreateCheckpointConfig("lineage-d", "", "ns")
			var cfgs []map[string]any
			for i := range 5 {
				md := graph.NewCheckpointMetadata(graph.CheckpointSourceLoop, i)
				md.Extra = map[string]any{"type": "odd", "priority": "low"}
				if i%2 == 0 {
					md.Extra = map[string]any{"type": "even", "priority": "high"}
				}
				c, _ := put(t, s, fCfg, map[string]any{"step": i}, md, "")
				cfgs = append(cfgs, c)
			}
			list := func(f *graph.CheckpointFilter) []*graph.CheckpointTuple {
				l, err := s.List(ctx, fCfg, f)
				must(t, err)
				return l
			}
			if even := list(&graph.CheckpointFilter{Metadata: map[string]any{"type": "even"}}); len(even) != 3 {
				t.Fatalf("even: %d", len(even))
			}
			if before := list(&graph.CheckpointFilter{Before: cfgs[2]}); len(before) != 2 {
				t.Fatalf("before: %d", len(before))
			}
			if both := list(&graph.CheckpointFilter{Metadata: map[string]any{"priority": "high"}, Limit: 2}); len(both) != 2 || both[0].Metadata.Extra["priority"] != "high" {
				t.Fatalf("combined: %d", len(both))
			}
			if all := list(nil); len(all) != 5 || all[0].Checkpoint.ChannelValues["step"] != float64(4) {
				t.Fatalf("all, newest first: %d", len(all))
			}

			// DeleteLineage (TestInMemoryCheckpointSaverDeleteLineage).
			must(t, s.DeleteLineage(ctx, "lineage-d"))
			if l := list(nil); len(l) != 0 {
				t.Fatalf("after DeleteLineage: %d", len(l))
			}
			if other, _ := s.Get(ctx, latestCfg); other == nil {
				t.Fatal("DeleteLineage removed another lineage")
			}
		})
	}
}
