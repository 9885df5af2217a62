package pgsaver_test

import (
	"context"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/checkpointer/pgsaver"
	"github.com/memvault/memvault/memvaulttest/pgtest"
	"github.com/memvault/memvault/serde"
)

// execFile runs the statements of a testdata SQL file one by one (CREATE
// INDEX CONCURRENTLY cannot share a multi-statement query).
func execFile(t testing.TB, pool *pgxpool.Pool, name string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	for stmt := range strings.SplitSeq(string(b), ";\n") {
		var lines []string
		for l := range strings.SplitSeq(stmt, "\n") {
			if !strings.HasPrefix(strings.TrimSpace(l), "--") {
				lines = append(lines, l)
			}
		}
		if s := strings.TrimSpace(strings.Join(lines, "\n")); s != "" {
			if _, err := pool.Exec(context.Background(), s); err != nil {
				t.Fatalf("%s: %v\n%s", name, err, s)
			}
		}
	}
}

// asJSON renders a decoded value as canonical JSON (sorted keys), so values
// compare whatever Go types the codec chose for numbers.
func asJSON(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("marshal %#v: %v", v, err)
	}
	var x any
	if err := json.Unmarshal(b, &x); err != nil {
		t.Fatal(err)
	}
	b, _ = json.Marshal(x)
	return string(b)
}

func wantJSON(t testing.TB, what string, got any, want string) {
	t.Helper()
	if g, w := asJSON(t, got), asJSON(t, json.RawMessage(want)); g != w {
		t.Errorf("%s = %s, want %s", what, g, w)
	}
}

func migrations(t testing.TB, pool *pgxpool.Pool, table string) []int32 {
	t.Helper()
	rows, err := pool.Query(context.Background(), "SELECT v FROM "+table+" ORDER BY v")
	if err != nil {
		t.Fatal(err)
	}
	var vs []int32
	for rows.Next() {
		var v int32
		if err := rows.Scan(&v); err != nil {
			t.Fatal(err)
		}
		vs = append(vs, v)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return vs
}

func seq(n int) []int32 {
	out := make([]int32, n)
	for i := range out {
		out[i] = int32(i)
	}
	return out
}

// TestJSRows reads rows written by JS LangGraph's PostgresSaver (generated
// with the npm package, see testdata/js_rows.mjs): json blobs, integer
// versions, "empty" placeholders, no channel_values in the document, v1
// checkpoints whose pending sends are their parent's __pregel_tasks writes.
// Setup upgrades JS's migrations 0..4 to LangGraph's 0..9.
func TestJSRows(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.Pool(t)
	execFile(t, pool, "js_rows.sql")
	s, err := pgsaver.New(pool, pgsaver.Options{VersionStyle: checkpointer.VersionInt})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Setup(ctx); err != nil {
		t.Fatal(err)
	}
	if got := migrations(t, pool, "checkpoint_migrations"); !slices.Equal(got, seq(10)) {
		t.Fatalf("checkpoint_migrations = %v, want 0..9", got)
	}

	const id1, id2, id3 = "1f1e606e-befa-6760-ffff-c817c2e36317", "1f1e606e-bf0d-6fe0-8000-f490090de42e", "1f1e606e-bf10-66f0-8001-727797d9b829"
	tu, err := s.GetTuple(ctx, checkpointer.Config{ThreadID: "js-1"})
	if err != nil {
		t.Fatal(err)
	}
	if tu == nil || tu.Config.CheckpointID != id2 {
		t.Fatalf("latest = %+v, want %s", tu, id2)
	}
	cp := tu.Checkpoint
	if cp.V != 4 || !cp.TS.Equal(time.Date(2024, 5, 4, 6, 32, 43, 0, time.UTC)) {
		t.Errorf("v, ts = %d, %v", cp.V, cp.TS)
	}
	wantJSON(t, "channel_values", cp.ChannelValues, `{"messages":[{"role":"user","content":"hi"},{"role":"ai","content":"yo"}],"count":1}`)
	if want := map[string]string{"messages": "2", "count": "1", "empty_ch": "1"}; !reflect.DeepEqual(cp.ChannelVersions, want) {
		t.Errorf("channel_versions = %v, want %v", cp.ChannelVersions, want)
	}
	if want := map[string]map[string]string{"__input__": {}, "agent": {"count": "1", "messages": "1"}}; !reflect.DeepEqual(cp.VersionsSeen, want) {
		t.Errorf("versions_seen = %v, want %v", cp.VersionsSeen, want)
	}
	wantJSON(t, "metadata", tu.Metadata, `{"step":0,"source":"loop","parents":{},"user_id":"u1"}`)
	if tu.ParentConfig == nil || tu.ParentConfig.CheckpointID != id1 {
		t.Errorf("parent = %+v, want %s", tu.ParentConfig, id1)
	}

	first, err := s.GetTuple(ctx, checkpointer.Config{ThreadID: "js-1", CheckpointID: id1})
	if err != nil {
		t.Fatal(err)
	}
	wantJSON(t, "first channel_values", first.Checkpoint.ChannelValues, `{"messages":[{"role":"user","content":"hi"}],"count":1}`)
	wantJSON(t, "pending writes", first.PendingWrites, `[
		{"TaskID":"task-a","Channel":"messages","Value":{"role":"ai","content":"yo"}},
		{"TaskID":"task-a","Channel":"count","Value":2},
		{"TaskID":"task-b","Channel":"__interrupt__","Value":{"value":"stop?"}}]`)
	if first.ParentConfig != nil {
		t.Errorf("first parent = %+v", first.ParentConfig)
	}

	var ids []string
	for tu, err := range s.List(ctx, &checkpointer.Config{ThreadID: "js-1"}, checkpointer.ListOptions{AllNamespaces: true}) {
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, tu.Config.CheckpointNS+"/"+tu.Config.CheckpointID)
	}
	if want := []string{"child:1/" + id3, "/" + id2, "/" + id1}; !slices.Equal(ids, want) {
		t.Errorf("list = %v, want %v", ids, want)
	}

	// v1 checkpoint: the parent's __pregel_tasks writes become the channel.
	const parent, child = "1f1e606e-bf12-6e00-ffff-b913a8cbfb1f", "1f1e606e-bf17-6c20-8001-dedf3b3f45d1"
	ct, err := s.GetTuple(ctx, checkpointer.Config{ThreadID: "js-sends"})
	if err != nil {
		t.Fatal(err)
	}
	if ct.Config.CheckpointID != child {
		t.Fatalf("latest js-sends = %s", ct.Config.CheckpointID)
	}
	wantJSON(t, "migrated sends", ct.Checkpoint.ChannelValues, `{"a":"x","__pregel_tasks":["send-1","send-2","send-3"]}`)
	if v := ct.Checkpoint.ChannelVersions[checkpointer.ChannelTasks]; v != "2" {
		t.Errorf("__pregel_tasks version = %q, want 2 (the greatest)", v)
	}
	pt, err := s.GetTuple(ctx, checkpointer.Config{ThreadID: "js-sends", CheckpointID: parent})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := pt.Checkpoint.ChannelValues[checkpointer.ChannelTasks]; ok {
		t.Errorf("parent got pending sends: %v", pt.Checkpoint.ChannelValues)
	}
	if len(pt.PendingWrites) != 3 {
		t.Errorf("parent writes = %v", pt.PendingWrites)
	}

	// memvault continues the JS thread in JS's style: integer versions,
	// json blobs, every value a blob row.
	next := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(1), TS: time.Now(),
		ChannelValues:   map[string]any{"messages": []any{"m"}, "count": 1},
		ChannelVersions: map[string]string{"messages": s.NextVersion("2"), "count": "1", "empty_ch": "1"},
		VersionsSeen:    map[string]map[string]string{},
	}
	cfg, err := s.Put(ctx, tu.Config, next, checkpointer.Metadata{"source": "loop", "step": 1}, map[string]string{"messages": "3"})
	if err != nil {
		t.Fatal(err)
	}
	var typ, btype string
	if err := pool.QueryRow(ctx, `SELECT jsonb_typeof(checkpoint->'channel_versions'->'messages') FROM checkpoints WHERE checkpoint_id = $1`, cfg.CheckpointID).Scan(&typ); err != nil {
		t.Fatal(err)
	}
	if err := pool.QueryRow(ctx, `SELECT type FROM checkpoint_blobs WHERE thread_id = 'js-1' AND channel = 'messages' AND version = '3'`).Scan(&btype); err != nil {
		t.Fatal(err)
	}
	if typ != "number" || btype != serde.TypeJSON {
		t.Errorf("memvault row on a JS thread: version is a %s, blob type %q; want number, json", typ, btype)
	}
}

// TestPythonRows reads rows as Python LangGraph writes them: inline
// primitive values merged under msgpack blobs, string versions, task_path.
// Setup on a database Python set up changes nothing of LangGraph's.
func TestPythonRows(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.Pool(t)
	execFile(t, pool, "python_schema.sql")
	execFile(t, pool, "python_rows.sql")
	s, err := pgsaver.New(pool, pgsaver.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Setup(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := (serde.JSONPlus{}).LoadsTyped(serde.TypeMsgpack, []byte{0x04}); err != nil {
		t.Skipf("serde.JSONPlus cannot decode msgpack yet (%v): Python blobs unreadable", err)
	}

	const a, b = "1ef4f797-8335-6428-bfff-8a1503f9b875", "1ef4f797-8340-6a1c-8000-b2c4f2a1d0e3"
	tu, err := s.GetTuple(ctx, checkpointer.Config{ThreadID: "py-1"})
	if err != nil {
		t.Fatal(err)
	}
	if tu.Config.CheckpointID != b || tu.ParentConfig == nil || tu.ParentConfig.CheckpointID != a {
		t.Fatalf("latest = %+v parent %+v", tu.Config, tu.ParentConfig)
	}
	wantJSON(t, "channel_values", tu.Checkpoint.ChannelValues,
		`{"__start__":{"question":"hi"},"question":"hi","count":3,"flag":true,"nothing":null,"ratio":0.25,"messages":["hi","there"]}`)
	if v := tu.Checkpoint.ChannelVersions["messages"]; v != "00000000000000000000000000000002.0.6027633760716439" {
		t.Errorf("messages version = %q", v)
	}
	if !tu.Checkpoint.TS.Equal(time.Date(2024, 5, 4, 6, 32, 42, 240012000, time.UTC)) {
		t.Errorf("ts = %v", tu.Checkpoint.TS)
	}
	wantJSON(t, "updated_channels", tu.Checkpoint.UpdatedChannels, `["count","flag","messages","nothing","question","ratio"]`)
	wantJSON(t, "metadata", tu.Metadata, `{"source":"loop","step":0,"parents":{},"run_id":"run-1","user_id":"u1"}`)
	wantJSON(t, "pending writes", tu.PendingWrites, `[
		{"TaskID":"t1","Channel":"messages","Value":["ok"]},
		{"TaskID":"t2","Channel":"__error__","Value":null},
		{"TaskID":"t2","Channel":"count","Value":4}]`)

	n := 0
	for tu, err := range s.List(ctx, nil, checkpointer.ListOptions{Filter: map[string]any{"run_id": "run-1"}}) {
		if err != nil {
			t.Fatal(err)
		}
		if n == 1 {
			wantJSON(t, "first checkpoint values", tu.Checkpoint.ChannelValues, `{"__start__":{"question":"hi"}}`)
		}
		n++
	}
	if n != 2 {
		t.Errorf("list by run_id: %d tuples, want 2", n)
	}

	// memvault continues the thread, changing only "messages": the
	// channels Python kept inline stay, even once Python's checkpoints are
	// pruned away.
	next := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(1), TS: time.Now(),
		ChannelValues: maps.Clone(tu.Checkpoint.ChannelValues), ChannelVersions: maps.Clone(tu.Checkpoint.ChannelVersions),
		VersionsSeen: tu.Checkpoint.VersionsSeen}
	next.ChannelValues["messages"] = []any{"hi", "there", "again"}
	nv := map[string]string{"messages": s.NextVersion(next.ChannelVersions["messages"])}
	next.ChannelVersions["messages"] = nv["messages"]
	cfg, err := s.Put(ctx, tu.Config, next, checkpointer.Metadata{"source": "loop", "step": 1}, nv)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Prune(ctx, []string{"py-1"}, checkpointer.PruneKeepLatest); err != nil {
		t.Fatal(err)
	}
	cont, err := s.GetTuple(ctx, checkpointer.Config{ThreadID: "py-1"})
	if err != nil {
		t.Fatal(err)
	}
	if cont.Config.CheckpointID != cfg.CheckpointID {
		t.Fatalf("latest after prune = %s, want %s", cont.Config.CheckpointID, cfg.CheckpointID)
	}
	wantJSON(t, "continued values", cont.Checkpoint.ChannelValues,
		`{"__start__":{"question":"hi"},"question":"hi","count":3,"flag":true,"nothing":null,"ratio":0.25,"messages":["hi","there","again"]}`)
}
