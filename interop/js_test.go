package interop_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/checkpointer/pgsaver"
	"github.com/memvault/memvault/memvaulttest/jsrows"
	"github.com/memvault/memvault/memvaulttest/pgtest"
	"github.com/memvault/memvault/serde"
	"github.com/memvault/memvault/serde/pyvalue"
)

// TestJSWritesMemvaultReads: JS LangGraph's PostgresSaver creates its tables
// (migrations 0..4) and writes two threads; memvault's Setup upgrades the
// tables to LangGraph's 0..9 and memvault reads every checkpoint exactly as
// JS reads it.
func TestJSWritesMemvaultReads(t *testing.T) {
	requireNode(t)
	ctx := context.Background()
	pool, schema := pgtest.Schema(t)
	var out writeOutput
	runNode(t, &out, "write.mjs", schema)
	fixtureThreads(t, out)
	if got := migrationVersions(t, pool, schema); !slices.Equal(got, upTo(4)) {
		t.Fatalf("after JS setup: checkpoint_migrations = %v, want 0..4", got)
	}

	s, err := pgsaver.New(pool, pgsaver.Options{Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Setup(ctx); err != nil {
		t.Fatalf("memvault Setup on JS tables: %v", err)
	}
	if got := migrationVersions(t, pool, schema); !slices.Equal(got, upTo(9)) {
		t.Fatalf("after memvault Setup: checkpoint_migrations = %v, want 0..9", got)
	}
	var paths []string
	rows, err := pool.Query(ctx, "SELECT DISTINCT task_path FROM "+pgx.Identifier{schema, "checkpoint_writes"}.Sanitize())
	if err == nil {
		paths, err = pgx.CollectRows(rows, pgx.RowTo[string])
	}
	if err != nil || !slices.Equal(paths, []string{""}) {
		t.Fatalf("task_path of JS's writes after the upgrade = %q, %v; want only \"\"", paths, err)
	}
	checkJSThreads(t, s, out)

	// JS still reads its threads on the upgraded tables, and its setup has
	// nothing left to do.
	var again readOutput
	runNode(t, &again, "read.mjs", schema, jsrows.JSGraphThread, "--setup")
	if got := migrationVersions(t, pool, schema); !slices.Equal(got, upTo(9)) {
		t.Fatalf("after JS setup on memvault's tables: checkpoint_migrations = %v, want 0..9", got)
	}
	want := out.Tuples[jsrows.JSGraphThread]
	if len(again.Tuples) != len(want) {
		t.Fatalf("JS lists %d checkpoints after the upgrade, %d before", len(again.Tuples), len(want))
	}
	for i := range want {
		checkSameJSView(t, fmt.Sprintf("JS after upgrade, tuple %d", i), again.Tuples[i], want[i])
	}
}

// checkJSThreads checks memvault's reading of the threads write.mjs wrote
// (out is JS's own reading of them) through List and GetTuple, with every
// filter, and the Go types of the values.
func checkJSThreads(t *testing.T, s *pgsaver.Saver, out writeOutput) {
	t.Helper()
	ctx := context.Background()
	for thread, want := range out.Tuples {
		t.Run(thread, func(t *testing.T) {
			got := collect(t, s.List(ctx, &checkpointer.Config{ThreadID: thread}, checkpointer.ListOptions{AllNamespaces: true}))
			if len(got) != len(want) {
				t.Fatalf("memvault lists %d checkpoints, JS %d", len(got), len(want))
			}
			for i := range want {
				checkTuple(t, got[i], want[i])
				one, err := s.GetTuple(ctx, checkpointer.Config{ThreadID: thread, CheckpointNS: want[i].Config.CheckpointNS, CheckpointID: want[i].Config.CheckpointID})
				if err != nil {
					t.Fatalf("GetTuple %s: %v", want[i].Config.CheckpointID, err)
				}
				checkTuple(t, one, want[i])
			}
		})
	}

	ids := out.Threads[jsrows.JSGraphThread]
	graph := checkpointer.Config{ThreadID: jsrows.JSGraphThread}
	latest, err := s.GetTuple(ctx, graph)
	if err != nil {
		t.Fatal(err)
	}
	if latest == nil || latest.Config.CheckpointID != ids["step1"] {
		t.Fatalf("latest of the root namespace = %+v, want %s", latest, ids["step1"])
	}
	child, err := s.GetTuple(ctx, checkpointer.Config{ThreadID: jsrows.JSGraphThread, CheckpointNS: ids["child_ns"]})
	if err != nil {
		t.Fatal(err)
	}
	if child == nil || child.Config.CheckpointID != ids["child"] {
		t.Fatalf("latest of %q = %+v, want %s", ids["child_ns"], child, ids["child"])
	}
	if got, want := fmt.Sprint(child.Metadata["parents"]), fmt.Sprint(map[string]any{"": ids["step0"]}); got != want {
		t.Errorf("child metadata parents = %s, want %s", got, want)
	}

	listIDs := func(cfg checkpointer.Config, opt checkpointer.ListOptions) []string {
		var out []string
		for _, tu := range collect(t, s.List(ctx, &cfg, opt)) {
			out = append(out, tu.Config.CheckpointID)
		}
		return out
	}
	root := []string{ids["step1"], ids["step0"], ids["input"]}
	for _, c := range []struct {
		name string
		opt  checkpointer.ListOptions
		want []string
	}{
		{"root namespace", checkpointer.ListOptions{}, root},
		{"filter user_id", checkpointer.ListOptions{Filter: map[string]any{"user_id": "u-1"}}, root},
		{"filter nested", checkpointer.ListOptions{Filter: map[string]any{"source": "input", "tags": []any{"fr"}}}, root[2:]},
		{"filter parents", checkpointer.ListOptions{Filter: map[string]any{"parents": map[string]any{"": ids["step0"]}}, AllNamespaces: true}, []string{ids["child"]}},
		{"before", checkpointer.ListOptions{Before: &checkpointer.Config{CheckpointID: ids["step1"]}}, root[1:]},
		{"limit", checkpointer.ListOptions{Limit: 2}, root[:2]},
	} {
		if got := listIDs(graph, c.opt); !slices.Equal(got, c.want) {
			t.Errorf("list %s = %v, want %v", c.name, got, c.want)
		}
	}

	checkGraphTypes(t, s, ids)
	checkSends(t, s, out.Threads[jsrows.JSSendsThread])
}

// checkGraphTypes checks the Go values memvault decodes JS's values into.
func checkGraphTypes(t *testing.T, s *pgsaver.Saver, ids map[string]string) {
	t.Helper()
	ctx := context.Background()
	get := func(id string) *checkpointer.Tuple {
		tu, err := s.GetTuple(ctx, checkpointer.Config{ThreadID: jsrows.JSGraphThread, CheckpointID: id})
		if err != nil || tu == nil {
			t.Fatalf("GetTuple %s: %v, %v", id, tu, err)
		}
		return tu
	}

	in := get(ids["input"])
	if got := in.Checkpoint.ChannelVersions; !reflect.DeepEqual(got, map[string]string{"__start__": "1"}) {
		t.Errorf("input versions = %v", got)
	}
	start, _ := in.Checkpoint.ChannelValues["__start__"].(map[string]any)
	msgs, _ := start["messages"].([]any)
	if len(msgs) != 1 {
		t.Fatalf("__start__ = %#v", in.Checkpoint.ChannelValues["__start__"])
	}
	human, ok := msgs[0].(pyvalue.Constructor)
	if !ok || human.LC != 1 || !slices.Equal(human.ID, []string{"langchain_core", "messages", "HumanMessage"}) ||
		human.Kwargs["content"] != "Bonjour ! J'ai été débité deux fois 🙁 — commande n°42 (注文)" {
		t.Errorf("human message = %#v", msgs[0])
	}
	if w := in.PendingWrites; len(w) != 3 || w[2].Channel != "branch:to:agent" || w[2].Value != nil {
		t.Errorf("input writes = %+v", w)
	}

	s0 := get(ids["step0"])
	if _, ok := s0.Checkpoint.ChannelValues["__start__"]; ok || s0.Checkpoint.ChannelVersions["__start__"] != "2" {
		t.Errorf("consumed __start__: value present %v, version %q", ok, s0.Checkpoint.ChannelVersions["__start__"])
	}
	if v, ok := s0.Checkpoint.ChannelValues["branch:to:agent"]; !ok || v != nil {
		t.Errorf("branch:to:agent = %#v, %v; want nil, present", v, ok)
	}
	var chans []string
	for _, w := range s0.PendingWrites {
		chans = append(chans, w.TaskID+"/"+w.Channel)
	}
	if want := []string{"task-agent/messages", "task-agent/branch:to:tools", "task-flaky/__error__", "task-tools/__interrupt__"}; !slices.Equal(chans, want) {
		t.Errorf("step0 writes = %v, want %v", chans, want)
	}
	if e, ok := s0.PendingWrites[2].Value.(pyvalue.Constructor); !ok || !slices.Equal(e.ID, []string{"Error"}) || !reflect.DeepEqual(e.Args, []any{"lookup_order: timeout after 30s"}) {
		t.Errorf("__error__ write = %#v", s0.PendingWrites[2].Value)
	}
	intr, _ := s0.PendingWrites[3].Value.([]any)
	if len(intr) != 1 || fmt.Sprint(intr[0]) != fmt.Sprint(map[string]any{"id": "intr-1", "value": map[string]any{"question": "Rembourser 42,50 € ?", "amount": 42.5}}) {
		t.Errorf("__interrupt__ write = %#v", s0.PendingWrites[3].Value)
	}

	s1 := get(ids["step1"])
	cv := s1.Checkpoint.ChannelValues
	if _, ok := cv["branch:to:agent"]; ok {
		t.Errorf("consumed branch:to:agent still has a value: %#v", cv["branch:to:agent"])
	}
	if att, ok := cv["attachment"].([]byte); !ok || !bytes.Equal(att, []byte{0x25, 0x50, 0x44, 0x46, 0x00, 0xff}) {
		t.Errorf("attachment (JS Uint8Array, type bytes) = %#v", cv["attachment"])
	}
	sc, _ := cv["scratch"].(map[string]any)
	if sc == nil {
		t.Fatalf("scratch = %#v", cv["scratch"])
	}
	for _, c := range []struct {
		key  string
		want any
	}{
		{"ints", []any{int64(0), int64(-1), int64(7), int64(9007199254740991), int64(-9007199254740991)}},
		{"floats", []any{0.1, -2.5e-8, 3.141592653589793, 1e21, 6.02214076e23}},
		{"text", "日本語 — עברית — emoji 👩‍👩‍👧 é\t\n\"quoted\" \\ back\x01slash"},
		{"nested", map[string]any{"a": map[string]any{"b": map[string]any{"c": []any{int64(1), []any{int64(2), []any{int64(3), map[string]any{"d": nil, "e": ""}}}}}}}},
		{"empty_object", map[string]any{}},
		{"empty_array", []any{}},
		{"flags", []any{true, false, nil}},
		{"raw", []byte{0, 1, 127, 128, 254, 255}},
		{"missing", nil},
	} {
		if got, ok := sc[c.key]; !ok || !reflect.DeepEqual(got, c.want) {
			t.Errorf("scratch.%s = %#v (present %v), want %#v", c.key, got, ok, c.want)
		}
	}
	if set, ok := sc["tags"].(pyvalue.Set); !ok || len(set) != 2 || !slices.Contains(set, any("refund")) || !slices.Contains(set, any("vip")) {
		t.Errorf("scratch.tags (JS Set) = %#v", sc["tags"])
	}
	if m, ok := sc["lookup"].(map[any]any); !ok || len(m) != 2 || m["amount"] != 42.5 || m[int64(2)] != "two" {
		t.Errorf("scratch.lookup (JS Map) = %#v", sc["lookup"])
	}
	if got := s1.Checkpoint.VersionsSeen["agent"]; !reflect.DeepEqual(got, map[string]string{"branch:to:agent": "1", "messages": "1", "user": "1"}) {
		t.Errorf("versions_seen.agent = %v", got)
	}
}

// checkSends checks the v1 checkpoint whose pending sends are its parent's
// __pregel_tasks writes.
func checkSends(t *testing.T, s *pgsaver.Saver, ids map[string]string) {
	t.Helper()
	tu, err := s.GetTuple(context.Background(), checkpointer.Config{ThreadID: jsrows.JSSendsThread, CheckpointID: ids["child"]})
	if err != nil || tu == nil {
		t.Fatalf("GetTuple sends child: %v, %v", tu, err)
	}
	want := []any{
		map[string]any{"node": "paint", "args": map[string]any{"colour": "rouge"}},
		map[string]any{"node": "paint", "args": map[string]any{"colour": "vert"}},
		map[string]any{"node": "paint", "args": map[string]any{"colour": "bleu"}},
	}
	if got := tu.Checkpoint.ChannelValues[checkpointer.ChannelTasks]; !reflect.DeepEqual(got, want) {
		t.Errorf("migrated pending sends = %#v, want %#v", got, want)
	}
	if v := tu.Checkpoint.ChannelVersions[checkpointer.ChannelTasks]; v != "2" {
		t.Errorf("__pregel_tasks version = %q, want the max version 2", v)
	}
	if tu.Checkpoint.V != 1 {
		t.Errorf("v = %d, want 1", tu.Checkpoint.V)
	}
}

// mvMessage is a LangChain message as JS writes it (an lc:1 constructor
// record, with the fields JS's classes fill in), held by a Go program.
func mvMessage(class, id, content string) pyvalue.Constructor {
	kw := map[string]any{"content": content, "id": id, "additional_kwargs": map[string]any{}, "response_metadata": map[string]any{}}
	if class == "AIMessage" {
		kw["tool_calls"], kw["invalid_tool_calls"] = []any{}, []any{}
	}
	return pyvalue.Constructor{LC: 1, Type: "constructor", ID: []string{"langchain_core", "messages", class}, Kwargs: kw}
}

// mvThread writes a thread through s as a graph would, with values of every
// kind memvault's JSONPlus writes as json or bytes, and returns the ids of
// its checkpoints (input, step0, step1, child).
func mvThread(t *testing.T, s checkpointer.Saver, thread, childNS string) map[string]string {
	t.Helper()
	ctx := context.Background()
	ids := map[string]string{}
	cp := &checkpointer.Checkpoint{V: 4, ChannelValues: map[string]any{}, ChannelVersions: map[string]string{}, VersionsSeen: map[string]map[string]string{}}
	cfg := checkpointer.Config{ThreadID: thread}
	step := func(name string, n int, source string, updates map[string]any, consumed ...string) {
		next := &checkpointer.Checkpoint{
			V: 4, ID: checkpointer.NewID(n), TS: cpTime(n),
			ChannelValues: map[string]any{}, ChannelVersions: map[string]string{}, VersionsSeen: map[string]map[string]string{},
		}
		for k, v := range cp.ChannelValues {
			next.ChannelValues[k] = v
		}
		for k, v := range cp.ChannelVersions {
			next.ChannelVersions[k] = v
		}
		for k, v := range cp.VersionsSeen {
			next.VersionsSeen[k] = v
		}
		newVersions := map[string]string{}
		for ch, v := range updates {
			nv := s.NextVersion(next.ChannelVersions[ch])
			next.ChannelVersions[ch], newVersions[ch] = nv, nv
			next.ChannelValues[ch] = v
		}
		for _, ch := range consumed {
			nv := s.NextVersion(next.ChannelVersions[ch])
			next.ChannelVersions[ch], newVersions[ch] = nv, nv
			delete(next.ChannelValues, ch)
		}
		// A node has seen the versions that existed: none before the first
		// message (an empty version is refused, as in LangGraph).
		if v := cp.ChannelVersions["messages"]; n >= 0 && v != "" {
			next.VersionsSeen["agent"] = map[string]string{"messages": v}
		}
		var err error
		cfg, err = s.Put(ctx, cfg, next, checkpointer.Metadata{"source": source, "step": n, "parents": map[string]any{}, "user_id": "u-go"}, newVersions)
		if err != nil {
			t.Fatalf("put %s: %v", name, err)
		}
		ids[name] = cfg.CheckpointID
		cp = next
	}
	human := mvMessage("HumanMessage", "go-1", "Hallo aus Go — ünïcødé ✓ 🚀")
	step("input", -1, "input", map[string]any{"__start__": map[string]any{"messages": []any{human}}})
	if err := s.PutWrites(ctx, cfg, []checkpointer.Write{{Channel: "messages", Value: []any{human}}, {Channel: "counter", Value: int64(1)}}, "task-start", "~__pregel_pull, __start__"); err != nil {
		t.Fatal(err)
	}
	step("step0", 0, "loop", map[string]any{"messages": []any{human}, "counter": int64(1)}, "__start__")
	if err := s.PutWrites(ctx, cfg, []checkpointer.Write{{Channel: checkpointer.ChannelInterrupt, Value: []any{map[string]any{"id": "go-intr", "value": "approve?"}}}}, "task-tools", ""); err != nil {
		t.Fatal(err)
	}
	step("step1", 1, "loop", map[string]any{
		"messages": []any{human, mvMessage("AIMessage", "go-2", "Antwort")},
		"profile": map[string]any{
			"name": "Zoë", "scores": []any{int64(1), 2.5, int64(-9007199254740991)}, "ok": true,
			"nested": map[string]any{"deep": []any{map[string]any{"x": "y"}, []any{}}},
			"tags":   pyvalue.Set{"a", "b"},
			"raw":    []byte{0, 1, 2, 255},
		},
		"attachment": []byte("%PDF-\x00\xff"),
		"text":       "línea 1\nlínea 2\t\"citada\" \\ 日本語",
	})
	if err := s.PutWrites(ctx, cfg, []checkpointer.Write{{Channel: "messages", Value: []any{mvMessage("AIMessage", "go-3", "pending")}}, {Channel: "counter", Value: int64(5)}}, "task-agent", ""); err != nil {
		t.Fatal(err)
	}
	sub, err := s.Put(ctx, checkpointer.Config{ThreadID: thread, CheckpointNS: childNS},
		&checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(0), TS: cpTime(3), ChannelValues: map[string]any{"q": "sub"}, ChannelVersions: map[string]string{"q": s.NextVersion("")}, VersionsSeen: map[string]map[string]string{}},
		checkpointer.Metadata{"source": "loop", "step": 0, "parents": map[string]any{"": ids["step0"]}}, map[string]string{"q": s.NextVersion("")})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.PutWrites(ctx, sub, []checkpointer.Write{{Channel: "q", Value: "done"}}, "task-sub", ""); err != nil {
		t.Fatal(err)
	}
	ids["child"] = sub.CheckpointID
	return ids
}

// TestMemvaultWritesJSReads: memvault sets up the tables (JS's setup then
// has nothing to do) and writes a thread with integer versions and plain
// JSONPlus values; JS LangGraph lists it and sees the same values, revived
// as the same JS classes, then continues the thread (a checkpoint and
// pending writes) and memvault reads the continuation and continues again.
func TestMemvaultWritesJSReads(t *testing.T) {
	requireNode(t)
	ctx := context.Background()
	pool, schema := pgtest.Schema(t)
	s, err := pgsaver.New(pool, pgsaver.Options{Schema: schema, Serde: serde.JSONPlus{}, VersionStyle: checkpointer.VersionInt})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Setup(ctx); err != nil {
		t.Fatal(err)
	}
	const thread, childNS = "mv-graph", "tools:0c4f0a3e-8f21-4b6e-9a57-3d1f6b2c9e10"
	ids := mvThread(t, s, thread, childNS)

	var r readOutput
	runNode(t, &r, "read.mjs", schema, thread, "--setup", "--continue")
	if got := migrationVersions(t, pool, schema); !slices.Equal(got, upTo(9)) {
		t.Fatalf("JS setup on memvault's tables changed checkpoint_migrations to %v", got)
	}

	// JS sees what memvault wrote (JS listed before continuing; memvault's
	// list now starts with JS's continuation, the newest checkpoint).
	mine := collect(t, s.List(ctx, &checkpointer.Config{ThreadID: thread}, checkpointer.ListOptions{AllNamespaces: true}))
	if len(r.Tuples) != 4 || len(mine) != 5 {
		t.Fatalf("JS listed %d checkpoints (want 4), memvault %d after JS's step (want 5)", len(r.Tuples), len(mine))
	}
	for i, jsView := range r.Tuples {
		checkTuple(t, mine[i+1], jsView)
	}
	if r.Latest == nil || r.Latest.Config.CheckpointID != ids["step1"] {
		t.Fatalf("JS getTuple latest = %+v, want %s", r.Latest, ids["step1"])
	}
	checkJSClasses(t, *r.Latest)

	// memvault reads JS's continuation.
	c := r.Continued
	if c == nil {
		t.Fatal("read.mjs did not continue the thread")
	}
	latest, err := s.GetTuple(ctx, checkpointer.Config{ThreadID: thread})
	if err != nil {
		t.Fatal(err)
	}
	if latest == nil || latest.Config.CheckpointID != c.Config.CheckpointID || latest.ParentConfig == nil || latest.ParentConfig.CheckpointID != ids["step1"] {
		t.Fatalf("memvault latest = %+v, want JS's %s with parent %s", latest, c.Config.CheckpointID, ids["step1"])
	}
	checkTuple(t, latest, c.Tuple)
	if got := latest.Checkpoint.ChannelVersions; got["messages"] != "3" || got["counter"] != "2" || got["profile"] != "1" {
		t.Errorf("versions after JS's step = %v, want messages 3, counter 2, profile 1", got)
	}
	if n := latest.Checkpoint.ChannelValues["counter"]; n != int64(2) {
		t.Errorf("counter after JS's step = %#v, want 2", n)
	}
	msgs, _ := latest.Checkpoint.ChannelValues["messages"].([]any)
	if len(msgs) != 3 {
		t.Fatalf("messages after JS's step = %#v", latest.Checkpoint.ChannelValues["messages"])
	}
	if m, ok := msgs[2].(pyvalue.Constructor); !ok || m.ID[len(m.ID)-1] != "AIMessage" || m.Kwargs["content"] != "Suite écrite par JS ✅" {
		t.Errorf("JS's message = %#v", msgs[2])
	}
	if w := latest.PendingWrites; len(w) != 2 || w[0].Channel != checkpointer.ChannelInterrupt || w[1].Channel != "messages" {
		t.Errorf("JS's pending writes = %+v, want __interrupt__ (idx -3) then messages", w)
	}

	// memvault continues after JS, and JS reads that too.
	next := latest.Checkpoint
	next.ID, next.TS = checkpointer.NewID(3), cpTime(9)
	nv := s.NextVersion(next.ChannelVersions["counter"])
	next.ChannelVersions["counter"], next.ChannelValues["counter"] = nv, int64(3)
	cfg, err := s.Put(ctx, latest.Config, next, checkpointer.Metadata{"source": "loop", "step": 3, "parents": map[string]any{}}, map[string]string{"counter": nv})
	if err != nil {
		t.Fatal(err)
	}
	var r2 readOutput
	runNode(t, &r2, "read.mjs", schema, thread)
	if r2.Latest == nil || r2.Latest.Config.CheckpointID != cfg.CheckpointID {
		t.Fatalf("JS latest after memvault's step = %+v, want %s", r2.Latest, cfg.CheckpointID)
	}
	again, err := s.GetTuple(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	checkTuple(t, again, *r2.Latest)
	if got := versionText(t, r2.Latest.Checkpoint.ChannelVersions["counter"]); got != "3" {
		t.Errorf("JS sees counter version %s, want 3", got)
	}
}

// checkJSClasses checks which JS classes JS revived memvault's values as.
func checkJSClasses(t *testing.T, v tupleView) {
	t.Helper()
	desc := func(ch string) map[string]any {
		var m any
		if err := json.Unmarshal(v.ChannelValues[ch].JS, &m); err != nil {
			t.Fatalf("%s: %v", ch, err)
		}
		out, _ := m.(map[string]any)
		if out == nil {
			out = map[string]any{"": m}
		}
		return out
	}
	var msgs []map[string]any
	if err := json.Unmarshal(v.ChannelValues["messages"].JS, &msgs); err != nil || len(msgs) != 2 {
		t.Fatalf("JS messages = %s (%v)", v.ChannelValues["messages"].JS, err)
	}
	if msgs[0]["$class"] != "HumanMessage" || msgs[1]["$class"] != "AIMessage" {
		t.Errorf("JS revived the messages as %v, %v; want HumanMessage, AIMessage", msgs[0]["$class"], msgs[1]["$class"])
	}
	p := desc("profile")
	if _, ok := p["tags"].(map[string]any)["$set"]; !ok {
		t.Errorf("JS revived profile.tags as %v, want a Set", p["tags"])
	}
	if got := p["raw"]; fmt.Sprint(got) != fmt.Sprint(map[string]any{"$bytes": "AAEC/w=="}) {
		t.Errorf("JS revived profile.raw as %v, want Uint8Array [0 1 2 255]", got)
	}
	if got := desc("attachment"); fmt.Sprint(got) != fmt.Sprint(map[string]any{"$bytes": "JVBERi0A/w=="}) {
		t.Errorf("JS revived attachment as %v, want a Uint8Array", got)
	}
}

// TestStringVersionsJSReads: with Python's string versions (memvault's
// default VersionStyle) JS LangGraph still reads the thread, but cannot
// continue it: its getNextVersion refuses string versions. This is why a
// saver shared with JS must use VersionInt.
func TestStringVersionsJSReads(t *testing.T) {
	requireNode(t)
	ctx := context.Background()
	pool, schema := pgtest.Schema(t)
	s, err := pgsaver.New(pool, pgsaver.Options{Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Setup(ctx); err != nil {
		t.Fatal(err)
	}
	const thread = "mv-strings"
	ids := mvThread(t, s, thread, "sub:1")
	var r readOutput
	runNode(t, &r, "read.mjs", schema, thread)
	mine := collect(t, s.List(ctx, &checkpointer.Config{ThreadID: thread}, checkpointer.ListOptions{AllNamespaces: true}))
	if len(r.Tuples) != len(mine) || r.Latest == nil || r.Latest.Config.CheckpointID != ids["step1"] {
		t.Fatalf("JS lists %d checkpoints (memvault %d), latest %+v", len(r.Tuples), len(mine), r.Latest)
	}
	for i := range mine {
		checkTuple(t, mine[i], r.Tuples[i])
	}
	_, stderr, err := execNode(t, "read.mjs", schema, thread, "--continue")
	if err == nil || !bytes.Contains(stderr, []byte("Please override this method to use string versions.")) {
		t.Errorf("JS continuing a thread with string versions: %v\n%s\nwant getNextVersion's refusal", err, stderr)
	}
}
