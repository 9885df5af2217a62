package checkpointertest

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/memvault/memvault/checkpointer"
)

func (s *suite) testList(t *testing.T) {
	s.runNS(t, []nsCase{
		{"by_thread_newest_first", func(t *testing.T, sv checkpointer.Saver, ns string) {
			thread := newThreadID("list")
			chain := putChain(t, sv, thread, ns, 5)
			putChain(t, sv, newThreadID("list-other"), ns, 2)
			got := listThread(t, sv, thread, ns)
			checkIDs(t, "list", idsOf(got), reversedIDs(chain))
			for i, tp := range got {
				checkTuple(t, tp, chain[len(chain)-1-i].want)
			}
		}},
		{"unknown_thread_is_empty", func(t *testing.T, sv checkpointer.Saver, ns string) {
			putChain(t, sv, newThreadID("list"), ns, 2)
			if got := listThread(t, sv, newThreadID("nobody"), ns); len(got) != 0 {
				t.Fatalf("unknown thread listed %d tuples", len(got))
			}
		}},
		{"all_namespaces", func(t *testing.T, sv checkpointer.Saver, ns string) {
			thread := newThreadID("list")
			a := putChain(t, sv, thread, ns, 2)
			b := putChain(t, sv, thread, "other:9", 2)
			c := cfgOf(thread, "", "")
			got := mustList(t, sv, &c, checkpointer.ListOptions{AllNamespaces: true})
			checkIDs(t, "all namespaces", idsOf(got), []string{b[1].want.id, b[0].want.id, a[1].want.id, a[0].want.id})
			checkIDs(t, "one namespace", idsOf(listThread(t, sv, thread, ns)), reversedIDs(a))
		}},
		{"filter_source", func(t *testing.T, sv checkpointer.Saver, ns string) {
			thread := newThreadID("list")
			chain := putChain(t, sv, thread, ns, 3)
			c := cfgOf(thread, ns, "")
			got := mustList(t, sv, &c, checkpointer.ListOptions{Filter: map[string]any{"source": "input"}})
			checkIDs(t, "source=input", idsOf(got), []string{chain[0].want.id})
			got = mustList(t, sv, &c, checkpointer.ListOptions{Filter: map[string]any{"source": "loop"}})
			checkIDs(t, "source=loop", idsOf(got), []string{chain[2].want.id, chain[1].want.id})
		}},
		{"filter_step", func(t *testing.T, sv checkpointer.Saver, ns string) {
			thread := newThreadID("list")
			chain := putChain(t, sv, thread, ns, 3)
			c := cfgOf(thread, ns, "")
			got := mustList(t, sv, &c, checkpointer.ListOptions{Filter: map[string]any{"step": 0}})
			checkIDs(t, "step=0", idsOf(got), []string{chain[1].want.id})
			got = mustList(t, sv, &c, checkpointer.ListOptions{Filter: map[string]any{"step": -1}})
			checkIDs(t, "step=-1", idsOf(got), []string{chain[0].want.id})
		}},
		{"filter_multi_key_and_no_match", func(t *testing.T, sv checkpointer.Saver, ns string) {
			thread := newThreadID("list")
			chain := putChain(t, sv, thread, ns, 3)
			c := cfgOf(thread, ns, "")
			got := mustList(t, sv, &c, checkpointer.ListOptions{Filter: map[string]any{"source": "loop", "step": 1}})
			checkIDs(t, "source=loop,step=1", idsOf(got), []string{chain[2].want.id})
			got = mustList(t, sv, &c, checkpointer.ListOptions{Filter: map[string]any{"source": "input", "step": 1}})
			checkIDs(t, "no match", idsOf(got), nil)
			got = mustList(t, sv, &c, checkpointer.ListOptions{Filter: map[string]any{"missing": "key"}})
			checkIDs(t, "missing key", idsOf(got), nil)
		}},
		{"filter_custom_keys_from_config", func(t *testing.T, sv checkpointer.Saver, ns string) {
			thread := newThreadID("list")
			var ids []string
			for i, user := range []string{"alice", "bob", "alice"} {
				cfg := cfgOf(thread, ns, "")
				cfg.Extra = map[string]any{"user_id": user}
				cp := newCheckpoint(i, nil, nil)
				mustPut(t, sv, cfg, cp, checkpointer.Metadata{"step": i}, nil)
				ids = append(ids, cp.ID)
			}
			c := cfgOf(thread, ns, "")
			got := mustList(t, sv, &c, checkpointer.ListOptions{Filter: map[string]any{"user_id": "alice"}})
			checkIDs(t, "user_id=alice", idsOf(got), []string{ids[2], ids[0]})
		}},
		{"before", func(t *testing.T, sv checkpointer.Saver, ns string) {
			thread := newThreadID("list")
			chain := putChain(t, sv, thread, ns, 4)
			c := cfgOf(thread, ns, "")
			got := mustList(t, sv, &c, checkpointer.ListOptions{Before: &chain[2].cfg})
			checkIDs(t, "before", idsOf(got), []string{chain[1].want.id, chain[0].want.id})
			got = mustList(t, sv, &c, checkpointer.ListOptions{Before: &chain[0].cfg})
			checkIDs(t, "before first", idsOf(got), nil)
		}},
		{"limit", func(t *testing.T, sv checkpointer.Saver, ns string) {
			thread := newThreadID("list")
			chain := putChain(t, sv, thread, ns, 4)
			c := cfgOf(thread, ns, "")
			for limit, w := range map[int][]string{1: {chain[3].want.id}, 3: reversedIDs(chain)[:3], 10: reversedIDs(chain)} {
				got := mustList(t, sv, &c, checkpointer.ListOptions{Limit: limit})
				checkIDs(t, fmt.Sprintf("limit %d", limit), idsOf(got), w)
			}
		}},
		{"limit_and_before", func(t *testing.T, sv checkpointer.Saver, ns string) {
			thread := newThreadID("list")
			chain := putChain(t, sv, thread, ns, 5)
			c := cfgOf(thread, ns, "")
			got := mustList(t, sv, &c, checkpointer.ListOptions{Before: &chain[3].cfg, Limit: 2})
			checkIDs(t, "before+limit", idsOf(got), []string{chain[2].want.id, chain[1].want.id})
		}},
		{"thread_and_filter", func(t *testing.T, sv checkpointer.Saver, ns string) {
			t1, t2 := newThreadID("list"), newThreadID("list")
			c1 := putChain(t, sv, t1, ns, 3)
			putChain(t, sv, t2, ns, 3)
			c := cfgOf(t1, ns, "")
			got := mustList(t, sv, &c, checkpointer.ListOptions{Filter: map[string]any{"source": "loop"}})
			checkIDs(t, "thread+filter", idsOf(got), []string{c1[2].want.id, c1[1].want.id})
		}},
		{"by_checkpoint_id", func(t *testing.T, sv checkpointer.Saver, ns string) {
			thread := newThreadID("list")
			chain := putChain(t, sv, thread, ns, 3)
			got := mustList(t, sv, &chain[1].cfg, checkpointer.ListOptions{})
			checkIDs(t, "by id", idsOf(got), []string{chain[1].want.id})
			checkTuple(t, got[0], chain[1].want)
		}},
		{"pending_writes_included", func(t *testing.T, sv checkpointer.Saver, ns string) {
			thread := newThreadID("list")
			chain := putChain(t, sv, thread, ns, 2)
			mustPutWrites(t, sv, chain[0].cfg, []wr{{"x", 1}}, "task-b", "")
			mustPutWrites(t, sv, chain[0].cfg, []wr{{"y", 2}}, "task-a", "")
			got := listThread(t, sv, thread, ns)
			checkIDs(t, "list", idsOf(got), reversedIDs(chain))
			w := chain[0].want
			w.writes = []pw{{"task-a", "y", 2}, {"task-b", "x", 1}}
			checkTuple(t, got[1], w)
			checkTuple(t, got[0], chain[1].want)
		}},
		{"nil_config_lists_every_thread", func(t *testing.T, sv checkpointer.Saver, ns string) {
			a := putChain(t, sv, newThreadID("list"), ns, 2)
			b := putChain(t, sv, newThreadID("list"), "other:4", 1)
			got := mustList(t, sv, nil, checkpointer.ListOptions{})
			checkIDs(t, "nil config", idsOf(got), []string{b[0].want.id, a[1].want.id, a[0].want.id})
			c := checkpointer.Config{CheckpointNS: ns}
			got = mustList(t, sv, &c, checkpointer.ListOptions{AllThreads: true})
			checkIDs(t, "no thread, one namespace, AllThreads", idsOf(got), []string{a[1].want.id, a[0].want.id})
		}},
	})
}

func reversedIDs(chain []chainStep) []string {
	out := make([]string, len(chain))
	for i, st := range chain {
		out[len(chain)-1-i] = st.want.id
	}
	return out
}

// matrixEntry is one stored tuple of the list matrix, with what reading it
// must give.
type matrixEntry struct {
	w  want
	md map[string]string // the top-level string metadata the model filters on
}

// testListMatrix is the JS validation suite's list cross product: thread id
// {none, 4 real, invalid} × namespace {unset, "", "child"} × limit {0, 1, 2}
// × before {none, 2 configs} × filter {nil, {}, {source: input},
// {source: loop}}, each checked against a plain model.
func (s *suite) testListMatrix(t *testing.T) {
	sv := s.newSaver(t)
	threads := []string{newThreadID("m0"), newThreadID("m1"), newThreadID("m2"), newThreadID("m3")}
	type chainKey struct {
		thread int
		ns     string
	}
	var keys []chainKey
	for i := range threads {
		keys = append(keys, chainKey{i, ""}, chainKey{i, "child"})
		if i%2 == 0 {
			keys = append(keys, chainKey{i, "child:other"})
		}
	}
	// Create the chains round robin so that ids interleave across threads
	// and namespaces.
	parents := map[chainKey]string{}
	versions := map[chainKey]string{}
	var entries []matrixEntry
	byKey := map[chainKey][]checkpointer.Config{}
	for step := range 3 {
		for _, k := range keys {
			if k.ns == "child:other" && step == 2 {
				continue
			}
			thread := threads[k.thread]
			v := sv.NextVersion(versions[k])
			versions[k] = v
			val := fmt.Sprintf("%d/%s/%d", k.thread, k.ns, step)
			cp := newCheckpoint(step-1, map[string]any{"value": val}, map[string]string{"value": v})
			src := "loop"
			if step == 0 {
				src = "input"
			}
			md := checkpointer.Metadata{"source": src, "step": step - 1, "thread": k.thread}
			cfg := mustPut(t, sv, cfgOf(thread, k.ns, parents[k]), cp, md, map[string]string{"value": v})
			w := want{
				thread: thread, ns: k.ns, id: cp.ID, parent: parents[k], cp: cloneCheckpoint(cp),
				md: map[string]any{"source": src, "step": step - 1, "thread": k.thread},
			}
			if step == 1 {
				task := fmt.Sprintf("task-%d", k.thread)
				mustPutWrites(t, sv, cfg, []wr{{"value", val + "/pending"}}, task, "")
				w.writes = []pw{{task, "value", val + "/pending"}}
			}
			entries = append(entries, matrixEntry{w: w, md: map[string]string{"source": src}})
			parents[k] = cp.ID
			byKey[k] = append(byKey[k], cfg)
		}
	}

	type threadSel struct {
		name string
		id   string // "" = none
	}
	threadSels := []threadSel{{"none", ""}}
	for i, th := range threads {
		threadSels = append(threadSels, threadSel{fmt.Sprintf("t%d", i), th})
	}
	threadSels = append(threadSels, threadSel{"invalid", newThreadID("invalid")})
	type nsSel struct {
		name  string
		ns    string
		unset bool
	}
	nsSels := []nsSel{{"unset", "", true}, {"root", "", false}, {"child", "child", false}}
	type beforeSel struct {
		name string
		cfg  *checkpointer.Config
	}
	b1 := byKey[chainKey{1, ""}][1]
	b2 := byKey[chainKey{3, "child"}][2]
	beforeSels := []beforeSel{{"none", nil}, {"t1-root-1", &b1}, {"t3-child-2", &b2}}
	type filterSel struct {
		name   string
		filter map[string]any
	}
	filterSels := []filterSel{{"nil", nil}, {"empty", map[string]any{}}, {"input", map[string]any{"source": "input"}}, {"loop", map[string]any{"source": "loop"}}}

	// model computes the expected result by brute force.
	model := func(ts threadSel, nss nsSel, limit int, b beforeSel, f filterSel) []matrixEntry {
		var out []matrixEntry
		for _, e := range entries {
			if ts.id != "" && e.w.thread != ts.id {
				continue
			}
			if !nss.unset && e.w.ns != nss.ns {
				continue
			}
			if b.cfg != nil && !(e.w.id < b.cfg.CheckpointID) {
				continue
			}
			ok := true
			for k, v := range f.filter {
				if e.md[k] != v {
					ok = false
				}
			}
			if ok {
				out = append(out, e)
			}
		}
		slices.SortFunc(out, func(a, b matrixEntry) int { return strings.Compare(b.w.id, a.w.id) })
		if limit > 0 && len(out) > limit {
			out = out[:limit]
		}
		return out
	}

	for _, ts := range threadSels {
		for _, nss := range nsSels {
			for _, limit := range []int{0, 1, 2} {
				for _, b := range beforeSels {
					for _, f := range filterSels {
						name := fmt.Sprintf("thread=%s,ns=%s,limit=%d,before=%s,filter=%s", ts.name, nss.name, limit, b.name, f.name)
						t.Run(name, func(t *testing.T) {
							var cfg *checkpointer.Config
							if ts.id != "" || !nss.unset {
								cfg = &checkpointer.Config{ThreadID: ts.id, CheckpointNS: nss.ns}
							}
							opt := checkpointer.ListOptions{Filter: f.filter, Before: b.cfg, Limit: limit, AllNamespaces: nss.unset, AllThreads: ts.id == ""}
							got := mustList(t, sv, cfg, opt)
							exp := model(ts, nss, limit, b, f)
							wantIDs := make([]string, len(exp))
							for i, e := range exp {
								wantIDs[i] = e.w.id
							}
							checkIDs(t, "list", idsOf(got), wantIDs)
							for i, e := range exp {
								checkTuple(t, got[i], e.w)
							}
						})
					}
				}
			}
		}
	}
}

// testListFilter checks metadata filters against PostgreSQL's JSONB
// containment (metadata @> filter), with hand-computed expectations.
func (s *suite) testListFilter(t *testing.T) {
	sv := s.newSaver(t)
	thread := newThreadID("filter")
	mds := []checkpointer.Metadata{
		0: {"source": "input", "step": -1, "user": map[string]any{"name": "ann", "age": 30, "roles": []any{"admin", "dev"}}},
		1: {"source": "loop", "step": 0, "user": map[string]any{"name": "bob", "age": 30.5}, "tags": []any{"a", "b", "c"}},
		2: {"source": "loop", "step": 1, "tags": []any{"b", map[string]any{"k": "v", "n": 1}}, "flag": true, "none": nil},
		3: {"source": "update", "step": 2, "parents": map[string]any{"": "p-1", "sub": "p-2"}, "big": int64(1) << 60, "flag": false},
		4: {"source": "fork", "step": 3, "nested": map[string]any{"a": map[string]any{"b": map[string]any{"c": "deep"}}}, "empty": map[string]any{}, "list": []any{}},
		5: {"source": "loop", "step": 4, "exact": int64(9007199254740993), "f": 0.1, "s": "1"},
	}
	ids := make([]string, len(mds))
	for i, md := range mds {
		cp := newCheckpoint(i, nil, nil)
		mustPut(t, sv, cfgOf(thread, "", ""), cp, md, nil)
		ids[i] = cp.ID
	}
	cases := []struct {
		name   string
		filter map[string]any
		want   []int // indices into mds, any order
	}{
		{"empty", map[string]any{}, []int{0, 1, 2, 3, 4, 5}},
		{"top_level_string", map[string]any{"source": "loop"}, []int{1, 2, 5}},
		{"int_matches_int", map[string]any{"step": 2}, []int{3}},
		{"int_matches_float_of_same_value", map[string]any{"step": 2.0}, []int{3}},
		{"negative", map[string]any{"step": -1}, []int{0}},
		{"nested_partial_object", map[string]any{"user": map[string]any{"name": "ann"}}, []int{0}},
		{"nested_number", map[string]any{"user": map[string]any{"age": 30}}, []int{0}},
		{"nested_float", map[string]any{"user": map[string]any{"age": 30.5}}, []int{1}},
		{"nested_array_subset", map[string]any{"user": map[string]any{"roles": []any{"dev"}}}, []int{0}},
		{"nested_array_not_subset", map[string]any{"user": map[string]any{"roles": []any{"dev", "ops"}}}, nil},
		{"empty_object_matches_any_object", map[string]any{"user": map[string]any{}}, []int{0, 1}},
		{"array_subset_any_order", map[string]any{"tags": []any{"c", "a"}}, []int{1}},
		{"array_element_shared", map[string]any{"tags": []any{"b"}}, []int{1, 2}},
		{"array_with_object_partial", map[string]any{"tags": []any{map[string]any{"k": "v"}}}, []int{2}},
		{"array_does_not_match_scalar_filter", map[string]any{"tags": "a"}, nil},
		{"empty_array_matches_any_array", map[string]any{"tags": []any{}}, []int{1, 2}},
		{"empty_array_vs_empty_array", map[string]any{"list": []any{}}, []int{4}},
		{"empty_object_vs_empty_object", map[string]any{"empty": map[string]any{}}, []int{4}},
		{"bool_true", map[string]any{"flag": true}, []int{2}},
		{"bool_false", map[string]any{"flag": false}, []int{3}},
		{"null", map[string]any{"none": nil}, []int{2}},
		{"null_does_not_match_missing", map[string]any{"missing": nil}, nil},
		{"parents_map", map[string]any{"parents": map[string]any{"": "p-1"}}, []int{3}},
		{"parents_map_wrong_value", map[string]any{"parents": map[string]any{"": "p-2"}}, nil},
		{"deeply_nested", map[string]any{"nested": map[string]any{"a": map[string]any{"b": map[string]any{"c": "deep"}}}}, []int{4}},
		{"deeply_nested_mismatch", map[string]any{"nested": map[string]any{"a": map[string]any{"b": "deep"}}}, nil},
		{"large_int", map[string]any{"big": int64(1) << 60}, []int{3}},
		{"exact_beyond_float53", map[string]any{"exact": int64(9007199254740993)}, []int{5}},
		{"exact_beyond_float53_neighbour", map[string]any{"exact": int64(9007199254740992)}, nil},
		{"float", map[string]any{"f": 0.1}, []int{5}},
		{"string_is_not_number", map[string]any{"s": 1}, nil},
		{"number_is_not_string", map[string]any{"step": "2"}, nil},
		{"multi_key", map[string]any{"source": "loop", "flag": true}, []int{2}},
		{"multi_key_no_match", map[string]any{"source": "input", "flag": true}, nil},
		{"scalar_vs_object", map[string]any{"user": "ann"}, nil},
		{"object_vs_scalar", map[string]any{"source": map[string]any{}}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := cfgOf(thread, "", "")
			got := mustList(t, sv, &cfg, checkpointer.ListOptions{Filter: c.filter})
			var w []string
			for i := len(ids) - 1; i >= 0; i-- {
				if slices.Contains(c.want, i) {
					w = append(w, ids[i])
				}
			}
			checkIDs(t, fmt.Sprintf("filter %v", c.filter), idsOf(got), w)
			for _, tp := range got {
				i := slices.Index(ids, tp.Config.CheckpointID)
				if d := diff(Normalize(map[string]any(mds[i])), Normalize(map[string]any(tp.Metadata))); d != "" {
					t.Fatalf("metadata of %d: %s", i, d)
				}
			}
		})
	}
}
