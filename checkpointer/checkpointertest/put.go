package checkpointertest

import (
	"maps"
	"testing"

	"github.com/memvault/memvault/checkpointer/internal/core"

	"github.com/memvault/memvault/checkpointer"
)

func (s *suite) testPut(t *testing.T) {
	s.runNS(t, []nsCase{
		{"returns_config", func(t *testing.T, sv checkpointer.Saver, ns string) {
			thread := newThreadID("put")
			cp := newCheckpoint(-1, nil, nil)
			in := cfgOf(thread, ns, "")
			in.Extra = map[string]any{"user_id": "u1"}
			got := mustPut(t, sv, in, cp, checkpointer.Metadata{"source": "input", "step": -1}, nil)
			w := cfgOf(thread, ns, cp.ID)
			if got.ThreadID != w.ThreadID || got.CheckpointNS != w.CheckpointNS || got.CheckpointID != w.CheckpointID || len(got.Extra) != 0 || len(got.Metadata) != 0 {
				t.Fatalf("Put returned %+v, want exactly %+v", got, w)
			}
		}},
		{"roundtrip", func(t *testing.T, sv checkpointer.Saver, ns string) {
			thread := newThreadID("put")
			v1 := sv.NextVersion("")
			cp := newCheckpoint(-1, map[string]any{"a": "x", "b": int64(2)}, map[string]string{"a": v1, "b": v1})
			cp.VersionsSeen = map[string]map[string]string{"__input__": {}, "node": {"a": v1}}
			cp.UpdatedChannels = []string{"a", "b"}
			before := cloneCheckpoint(cp)
			mustPut(t, sv, cfgOf(thread, ns, ""), cp, checkpointer.Metadata{"source": "input", "step": -1}, map[string]string{"a": v1, "b": v1})
			if d := checkpointDiff(cp, before); len(d) > 0 {
				t.Fatalf("Put modified its checkpoint argument: %v", d)
			}
			got := mustGetSome(t, sv, cfgOf(thread, ns, cp.ID))
			checkTuple(t, got, want{thread: thread, ns: ns, id: cp.ID, cp: before, md: map[string]any{"source": "input", "step": -1}})
		}},
		{"channel_value_kinds", func(t *testing.T, sv checkpointer.Saver, ns string) {
			thread := newThreadID("put")
			vals := map[string]any{
				"str": "hello", "int": int64(42), "list": []any{int64(1), "two", 3.5},
				"dict":  map[string]any{"k": "v", "n": map[string]any{"x": true}},
				"bytes": []byte{0, 1, 2, 255}, "none": nil, "bool": false, "float": 0.25,
			}
			versions := map[string]string{}
			for ch := range vals {
				versions[ch] = sv.NextVersion("")
			}
			cp := newCheckpoint(0, vals, versions)
			mustPut(t, sv, cfgOf(thread, ns, ""), cp, nil, versions)
			got := mustGetSome(t, sv, cfgOf(thread, ns, ""))
			wcp := cloneCheckpoint(cp)
			checkTuple(t, got, want{thread: thread, ns: ns, id: cp.ID, cp: wcp, md: map[string]any{}})
		}},
		{"channel_versions_and_versions_seen", func(t *testing.T, sv checkpointer.Saver, ns string) {
			thread := newThreadID("put")
			v1 := sv.NextVersion("")
			v2 := sv.NextVersion(v1)
			cp := newCheckpoint(1, map[string]any{"a": "1"}, map[string]string{"a": v2, "b": v1})
			cp.VersionsSeen = map[string]map[string]string{"n1": {"a": v1}, "n2": {"a": v2, "b": v1}, "__interrupt__": {"a": v1}}
			mustPut(t, sv, cfgOf(thread, ns, ""), cp, nil, map[string]string{"a": v2})
			got := mustGetSome(t, sv, cfgOf(thread, ns, ""))
			w := cloneCheckpoint(cp)
			checkTuple(t, got, want{thread: thread, ns: ns, id: cp.ID, cp: w})
			if n, _ := core.VersionNumber(got.Checkpoint.ChannelVersions["a"]); n != 2 {
				t.Fatalf("version of a = %q, want integer part 2", got.Checkpoint.ChannelVersions["a"])
			}
		}},
		{"metadata", func(t *testing.T, sv checkpointer.Saver, ns string) {
			thread := newThreadID("put")
			md := checkpointer.Metadata{
				"source": "loop", "step": 3, "parents": map[string]any{"": "1ef-parent"},
				"custom": "yes", "nested": map[string]any{"list": []any{1, "a"}}, "score": 0.5,
			}
			cp := newCheckpoint(3, nil, nil)
			mustPut(t, sv, cfgOf(thread, ns, ""), cp, md, nil)
			got := mustGetSome(t, sv, cfgOf(thread, ns, cp.ID))
			checkTuple(t, got, want{thread: thread, ns: ns, id: cp.ID, md: map[string]any(md)})
		}},
		{"metadata_merge_from_config", func(t *testing.T, sv checkpointer.Saver, ns string) {
			thread := newThreadID("put")
			cfg := cfgOf(thread, ns, "")
			cfg.Extra = map[string]any{
				"user_id": "u-1", "count": 3, "flag": true, "ratio": 1.5,
				"__private": "no", "langgraph_step": 9, "checkpoint_map": "no", "obj": map[string]any{"no": 1},
				"source": "overridden?",
			}
			cfg.Metadata = map[string]any{"run_id": "run-1", "writes": "kept from config?", "user_id": "from metadata"}
			md := checkpointer.Metadata{"source": "input", "step": -1, "writes": map[string]any{"n": 1}}
			cp := newCheckpoint(-1, nil, nil)
			mustPut(t, sv, cfg, cp, md, nil)
			got := mustGetSome(t, sv, cfgOf(thread, ns, ""))
			// config["metadata"] is merged before config["configurable"];
			// "writes" is dropped wherever it comes from.
			wmd := map[string]any{
				"source": "input", "step": -1, "count": 3, "flag": true, "ratio": 1.5,
				"run_id": "run-1", "user_id": "from metadata",
			}
			checkTuple(t, got, want{thread: thread, ns: ns, id: cp.ID, md: wmd})
		}},
		{"metadata_nul_stripped", func(t *testing.T, sv checkpointer.Saver, ns string) {
			thread := newThreadID("put")
			md := checkpointer.Metadata{"source": "in\x00put", "k\x00ey": "v", "nested": map[string]any{"s": "a\x00b"}}
			cp := newCheckpoint(-1, nil, nil)
			mustPut(t, sv, cfgOf(thread, ns, ""), cp, md, nil)
			got := mustGetSome(t, sv, cfgOf(thread, ns, ""))
			checkTuple(t, got, want{thread: thread, ns: ns, id: cp.ID, md: map[string]any{"source": "input", "key": "v", "nested": map[string]any{"s": "ab"}}})
			c := cfgOf(thread, ns, "")
			if n := len(mustList(t, sv, &c, checkpointer.ListOptions{Filter: map[string]any{"source": "input"}})); n != 1 {
				t.Fatalf("filter on the stripped value found %d tuples, want 1", n)
			}
		}},
		{"run_id_kept", func(t *testing.T, sv checkpointer.Saver, ns string) {
			thread := newThreadID("put")
			cfg := cfgOf(thread, ns, "")
			cfg.Metadata = map[string]any{"run_id": "run-42"}
			cp := newCheckpoint(0, nil, nil)
			mustPut(t, sv, cfg, cp, checkpointer.Metadata{"source": "loop", "step": 0}, nil)
			got := mustGetSome(t, sv, cfgOf(thread, ns, ""))
			if got.Metadata["run_id"] != "run-42" {
				t.Fatalf("run_id = %#v, want run-42", got.Metadata["run_id"])
			}
		}},
		{"many_checkpoints", func(t *testing.T, sv checkpointer.Saver, ns string) {
			thread := newThreadID("put")
			chain := putChain(t, sv, thread, ns, 6)
			got := listThread(t, sv, thread, ns)
			if len(got) != len(chain) {
				t.Fatalf("listed %d checkpoints, want %d", len(got), len(chain))
			}
			for i, tp := range got {
				checkTuple(t, tp, chain[len(chain)-1-i].want)
			}
		}},
		{"thread_isolation", func(t *testing.T, sv checkpointer.Saver, ns string) {
			t1, t2 := newThreadID("put"), newThreadID("put")
			c1 := putChain(t, sv, t1, ns, 2)
			c2 := putChain(t, sv, t2, ns, 3)
			checkTuple(t, mustGetSome(t, sv, cfgOf(t1, ns, "")), c1[1].want)
			checkTuple(t, mustGetSome(t, sv, cfgOf(t2, ns, "")), c2[2].want)
			if tp := mustGet(t, sv, cfgOf(t1, ns, c2[0].want.id)); tp != nil {
				t.Fatalf("thread %s returned a checkpoint of thread %s", t1, t2)
			}
			if n := len(listThread(t, sv, t1, ns)); n != 2 {
				t.Fatalf("thread %s lists %d checkpoints, want 2", t1, n)
			}
		}},
		{"parent_config", func(t *testing.T, sv checkpointer.Saver, ns string) {
			thread := newThreadID("put")
			chain := putChain(t, sv, thread, ns, 3)
			for _, st := range chain {
				checkTuple(t, mustGetSome(t, sv, cfgOf(thread, ns, st.want.id)), st.want)
			}
		}},
		{"incremental_update", func(t *testing.T, sv checkpointer.Saver, ns string) {
			thread := newThreadID("put")
			va1, vb1 := sv.NextVersion(""), sv.NextVersion("")
			cp1 := newCheckpoint(0, map[string]any{"a": "a1", "b": "b1"}, map[string]string{"a": va1, "b": vb1})
			mustPut(t, sv, cfgOf(thread, ns, ""), cp1, nil, map[string]string{"a": va1, "b": vb1})
			va2 := sv.NextVersion(va1)
			// cp2 carries only the changed channel's value; b is loaded from
			// the blob cp1 wrote at version vb1.
			cp2 := newCheckpoint(1, map[string]any{"a": "a2"}, map[string]string{"a": va2, "b": vb1})
			mustPut(t, sv, cfgOf(thread, ns, cp1.ID), cp2, nil, map[string]string{"a": va2})
			got := mustGetSome(t, sv, cfgOf(thread, ns, cp2.ID))
			w := cloneCheckpoint(cp2)
			w.ChannelValues = map[string]any{"a": "a2", "b": "b1"}
			checkTuple(t, got, want{thread: thread, ns: ns, id: cp2.ID, parent: cp1.ID, cp: w})
			old := mustGetSome(t, sv, cfgOf(thread, ns, cp1.ID))
			checkTuple(t, old, want{thread: thread, ns: ns, id: cp1.ID, cp: cloneCheckpoint(cp1)})
		}},
		{"new_channel_added", func(t *testing.T, sv checkpointer.Saver, ns string) {
			thread := newThreadID("put")
			va := sv.NextVersion("")
			cp1 := newCheckpoint(0, map[string]any{"a": 1}, map[string]string{"a": va})
			mustPut(t, sv, cfgOf(thread, ns, ""), cp1, nil, map[string]string{"a": va})
			vc := sv.NextVersion("")
			cp2 := newCheckpoint(1, map[string]any{"c": []any{"new"}}, map[string]string{"a": va, "c": vc})
			mustPut(t, sv, cfgOf(thread, ns, cp1.ID), cp2, nil, map[string]string{"c": vc})
			got := mustGetSome(t, sv, cfgOf(thread, ns, ""))
			w := cloneCheckpoint(cp2)
			w.ChannelValues = map[string]any{"a": 1, "c": []any{"new"}}
			checkTuple(t, got, want{thread: thread, ns: ns, id: cp2.ID, parent: cp1.ID, cp: w})
		}},
		{"channel_removed", func(t *testing.T, sv checkpointer.Saver, ns string) {
			thread := newThreadID("put")
			va, vb := sv.NextVersion(""), sv.NextVersion("")
			cp1 := newCheckpoint(0, map[string]any{"a": 1, "b": 2}, map[string]string{"a": va, "b": vb})
			mustPut(t, sv, cfgOf(thread, ns, ""), cp1, nil, map[string]string{"a": va, "b": vb})
			cp2 := newCheckpoint(1, map[string]any{"a": 1, "b": 2}, map[string]string{"a": va})
			mustPut(t, sv, cfgOf(thread, ns, cp1.ID), cp2, nil, nil)
			got := mustGetSome(t, sv, cfgOf(thread, ns, ""))
			w := cloneCheckpoint(cp2)
			w.ChannelValues = map[string]any{"a": 1}
			checkTuple(t, got, want{thread: thread, ns: ns, id: cp2.ID, parent: cp1.ID, cp: w})
		}},
		{"value_without_new_version_not_written", func(t *testing.T, sv checkpointer.Saver, ns string) {
			thread := newThreadID("put")
			va := sv.NextVersion("")
			cp := newCheckpoint(0, map[string]any{"a": "v", "b": "not persisted"}, map[string]string{"a": va, "b": va})
			mustPut(t, sv, cfgOf(thread, ns, ""), cp, nil, map[string]string{"a": va})
			got := mustGetSome(t, sv, cfgOf(thread, ns, ""))
			w := cloneCheckpoint(cp)
			w.ChannelValues = map[string]any{"a": "v"}
			checkTuple(t, got, want{thread: thread, ns: ns, id: cp.ID, cp: w})
		}},
		{"version_without_value_is_empty", func(t *testing.T, sv checkpointer.Saver, ns string) {
			thread := newThreadID("put")
			va := sv.NextVersion("")
			cp := newCheckpoint(0, map[string]any{}, map[string]string{"a": va})
			mustPut(t, sv, cfgOf(thread, ns, ""), cp, nil, map[string]string{"a": va})
			got := mustGetSome(t, sv, cfgOf(thread, ns, ""))
			w := cloneCheckpoint(cp)
			checkTuple(t, got, want{thread: thread, ns: ns, id: cp.ID, cp: w})
		}},
		{"upsert_same_id", func(t *testing.T, sv checkpointer.Saver, ns string) {
			thread := newThreadID("put")
			cp := newCheckpoint(0, nil, nil)
			mustPut(t, sv, cfgOf(thread, ns, ""), cp, checkpointer.Metadata{"n": 1}, nil)
			mustPut(t, sv, cfgOf(thread, ns, ""), cp, checkpointer.Metadata{"n": 2}, nil)
			got := listThread(t, sv, thread, ns)
			if len(got) != 1 {
				t.Fatalf("listed %d checkpoints after two puts of one id, want 1", len(got))
			}
			checkTuple(t, got[0], want{thread: thread, ns: ns, id: cp.ID, md: map[string]any{"n": 2}})
		}},
		{"reput_keeps_parent_and_first_value", func(t *testing.T, sv checkpointer.Saver, ns string) {
			// LangGraph's insert semantics: a checkpoint put again under
			// its id gets the new document and metadata but keeps the
			// parent stored first, and a (channel, version) names one
			// value forever: the first stored (ON CONFLICT DO NOTHING).
			thread := newThreadID("put")
			parent := newCheckpoint(0, nil, nil)
			mustPut(t, sv, cfgOf(thread, ns, ""), parent, nil, nil)
			other := newCheckpoint(0, nil, nil)
			mustPut(t, sv, cfgOf(thread, ns, ""), other, nil, nil)
			v := sv.NextVersion("")
			cp := newCheckpoint(1, map[string]any{"a": "first"}, map[string]string{"a": v})
			mustPut(t, sv, cfgOf(thread, ns, parent.ID), cp, checkpointer.Metadata{"n": 1}, map[string]string{"a": v})
			again := cloneCheckpoint(cp)
			again.ChannelValues = map[string]any{"a": "second"}
			again.VersionsSeen = map[string]map[string]string{"node": {"a": v}}
			for _, p := range []string{"", other.ID} {
				mustPut(t, sv, cfgOf(thread, ns, p), again, checkpointer.Metadata{"n": 2}, map[string]string{"a": v})
				w := cloneCheckpoint(again)
				w.ChannelValues = map[string]any{"a": "first"}
				checkTuple(t, mustGetSome(t, sv, cfgOf(thread, ns, cp.ID)), want{thread: thread, ns: ns, id: cp.ID, parent: parent.ID, cp: w, md: map[string]any{"n": 2}})
			}
		}},
		{"fork_reusing_a_version_reads_first_value", func(t *testing.T, sv checkpointer.Saver, ns string) {
			// A fork whose new version is one the original branch already
			// stored (what integer versions, VersionInt, give a fork
			// counted from an older checkpoint: JS LangGraph's style has
			// no random suffix to tell them apart) reads the value stored
			// first at that version, on every backend, as LangGraph's SQL
			// savers do.
			thread := newThreadID("put")
			chain := putChain(t, sv, thread, ns, 2)
			reused := chain[1].want.cp.ChannelVersions["counter"]
			versions := maps.Clone(chain[0].want.cp.ChannelVersions)
			versions["counter"] = reused
			cp := newCheckpoint(1, map[string]any{"counter": "forked"}, versions)
			mustPut(t, sv, chain[0].cfg, cp, nil, map[string]string{"counter": reused})
			w := cloneCheckpoint(cp)
			w.ChannelValues = map[string]any{"counter": int64(1), "base": "base value"}
			checkTuple(t, mustGetSome(t, sv, cfgOf(thread, ns, cp.ID)), want{thread: thread, ns: ns, id: cp.ID, parent: chain[0].want.id, cp: w, md: map[string]any{}})
		}},
		{"empty_checkpoint", func(t *testing.T, sv checkpointer.Saver, ns string) {
			thread := newThreadID("put")
			cp := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(-2), TS: now()}
			mustPut(t, sv, cfgOf(thread, ns, ""), cp, nil, nil)
			got := mustGetSome(t, sv, cfgOf(thread, ns, ""))
			checkTuple(t, got, want{thread: thread, ns: ns, id: cp.ID, cp: &checkpointer.Checkpoint{V: 4, ID: cp.ID, TS: cp.TS}, md: map[string]any{}})
		}},
		{"stored_state_is_copied", func(t *testing.T, sv checkpointer.Saver, ns string) {
			thread := newThreadID("put")
			v := sv.NextVersion("")
			inner := map[string]any{"k": "original"}
			list := []any{"x"}
			cp := newCheckpoint(0, map[string]any{"m": inner, "l": list}, map[string]string{"m": v, "l": v})
			md := checkpointer.Metadata{"tags": []any{"a"}, "o": map[string]any{"k": "v"}}
			mustPut(t, sv, cfgOf(thread, ns, ""), cp, md, map[string]string{"m": v, "l": v})
			inner["k"] = "mutated"
			list[0] = "mutated"
			cp.ChannelVersions["m"] = "mutated"
			md["o"].(map[string]any)["k"] = "mutated"
			md["tags"].([]any)[0] = "mutated"
			got := mustGetSome(t, sv, cfgOf(thread, ns, ""))
			wantVals := map[string]any{"m": map[string]any{"k": "original"}, "l": []any{"x"}}
			wantMD := map[string]any{"tags": []any{"a"}, "o": map[string]any{"k": "v"}}
			if d := diff(Normalize(wantVals), Normalize(got.Checkpoint.ChannelValues)); d != "" {
				t.Fatalf("mutating Put's argument changed stored values: %s", d)
			}
			if got.Checkpoint.ChannelVersions["m"] != v {
				t.Fatalf("mutating Put's argument changed stored versions")
			}
			// Mutate what was returned; the next read is unaffected.
			got.Checkpoint.ChannelValues["m"] = "changed"
			if m, ok := got.Checkpoint.ChannelValues["l"].([]any); ok && len(m) > 0 {
				m[0] = "changed"
			}
			got.Checkpoint.ChannelVersions["m"] = "changed"
			got.Metadata["o"] = "changed"
			if tags, ok := got.Metadata["tags"].([]any); ok && len(tags) > 0 {
				tags[0] = "changed"
			}
			again := mustGetSome(t, sv, cfgOf(thread, ns, ""))
			if d := diff(Normalize(wantVals), Normalize(again.Checkpoint.ChannelValues)); d != "" {
				t.Fatalf("mutating a returned tuple changed stored values: %s", d)
			}
			if d := diff(Normalize(wantMD), Normalize(map[string]any(again.Metadata))); d != "" {
				t.Fatalf("metadata: %s", d)
			}
			if again.Checkpoint.ChannelVersions["m"] != v {
				t.Fatalf("mutating a returned tuple changed stored versions")
			}
		}},
		{"namespaces_are_separate", func(t *testing.T, sv checkpointer.Saver, ns string) {
			thread := newThreadID("put")
			other := "other:1"
			if ns == other {
				other = ""
			}
			chain := putChain(t, sv, thread, ns, 2)
			if tp := mustGet(t, sv, cfgOf(thread, other, "")); tp != nil {
				t.Fatalf("namespace %q returned %s stored in %q", other, tp.Config.CheckpointID, ns)
			}
			if tp := mustGet(t, sv, cfgOf(thread, other, chain[0].want.id)); tp != nil {
				t.Fatalf("namespace %q returned %s by id", other, tp.Config.CheckpointID)
			}
			checkTuple(t, mustGetSome(t, sv, cfgOf(thread, ns, "")), chain[1].want)
		}},
		{"time_travel_fork", func(t *testing.T, sv checkpointer.Saver, ns string) {
			thread := newThreadID("put")
			chain := putChain(t, sv, thread, ns, 3)
			// Fork from the first checkpoint: a new branch whose parent is
			// chain[0]; the latest is now the fork. Its version follows
			// the newest stored one: integer versions counted from
			// chain[0]'s would reuse chain[1]'s, whose value is kept (see
			// fork_reusing_a_version_reads_first_value).
			v := sv.NextVersion(chain[2].want.cp.ChannelVersions["counter"])
			versions := maps.Clone(chain[0].want.cp.ChannelVersions)
			versions["counter"] = v
			cp := newCheckpoint(1, map[string]any{"counter": "forked"}, versions)
			mustPut(t, sv, chain[0].cfg, cp, checkpointer.Metadata{"source": "fork"}, map[string]string{"counter": v})
			got := mustGetSome(t, sv, cfgOf(thread, ns, ""))
			w := cloneCheckpoint(cp)
			w.ChannelValues = map[string]any{"counter": "forked", "base": "base value"}
			checkTuple(t, got, want{thread: thread, ns: ns, id: cp.ID, parent: chain[0].want.id, cp: w, md: map[string]any{"source": "fork"}})
			checkTuple(t, mustGetSome(t, sv, cfgOf(thread, ns, chain[2].want.id)), chain[2].want)
		}},
	})
}
