package mongosaver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/memvault/memvault/backends/mongodb/mongosaver"
	"github.com/memvault/memvault/backends/mongodb/mongotest"
	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/memvaulttest/testkeys"
	"github.com/memvault/memvault/serde"
)

// The documents of these tests are built from the layouts of Python's
// MongoDBSaver (langgraph-checkpoint-mongodb 0.4 saver.py: the whole
// checkpoint, channel_values inline, as serde.dumps_typed writes it, in
// the "checkpoint" binary with its type) and JS's MongoDBSaver
// (@langchain/langgraph-checkpoint-mongodb 1.4 checkpoint.ts: type
// "json", metadata one JSON binary plus metadata_search, upserted_at,
// writes without task_path), as ../shared/reference/
// mongodb-redis-cosmos-layouts.md §2.1-2.2 records them.

// putTwo puts two checkpoints on thread "shared": the first with three
// channels, the second changing one of them.
func putTwo(t *testing.T, s *mongosaver.Saver) (checkpointer.Config, checkpointer.Config) {
	t.Helper()
	ctx := context.Background()
	v1 := s.NextVersion("")
	cp1 := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(0), TS: time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC),
		ChannelValues:   map[string]any{"messages": []any{"hi"}, "count": 3, "none": nil},
		ChannelVersions: map[string]string{"messages": v1, "count": v1, "none": v1},
		VersionsSeen:    map[string]map[string]string{"agent": {"messages": v1}}}
	cfg1, err := s.Put(ctx, checkpointer.Config{ThreadID: "shared"}, cp1, checkpointer.Metadata{"source": "input", "step": -1}, cp1.ChannelVersions)
	if err != nil {
		t.Fatal(err)
	}
	v2 := s.NextVersion(v1)
	cp2 := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(1), TS: time.Date(2026, 11, 29, 10, 0, 1, 0, time.UTC),
		ChannelValues:   map[string]any{"messages": []any{"hi", "there"}, "count": 3, "none": nil},
		ChannelVersions: map[string]string{"messages": v2, "count": v1, "none": v1},
		VersionsSeen:    map[string]map[string]string{"agent": {"messages": v2}}}
	cfg2, err := s.Put(ctx, cfg1, cp2, checkpointer.Metadata{"source": "loop", "step": 0}, map[string]string{"messages": v2})
	if err != nil {
		t.Fatal(err)
	}
	return cfg1, cfg2
}

func rawCheckpoint(t *testing.T, db *mongo.Database, id string) bson.Raw {
	t.Helper()
	var doc bson.Raw
	if err := db.Collection("checkpoints").FindOne(context.Background(), bson.D{{Key: "checkpoint_id", Value: id}}).Decode(&doc); err != nil {
		t.Fatal(err)
	}
	return doc
}

// TestPythonReadsPlaintextValues: with a plaintext JSON serializer the
// checkpoint binary is the whole checkpoint, channel values inline, typed
// "json" — what Python's JsonPlusSerializer.loads_typed reads with
// json.loads — including the values a checkpoint inherits from its parent,
// and nothing is left in memvault_values. (Before: channel_values was {}
// and the values lived in memvault_values only.)
func TestPythonReadsPlaintextValues(t *testing.T) {
	t.Parallel()
	db := mongotest.Database(t)
	s, err := mongosaver.New(db, mongosaver.Options{})
	if err != nil {
		t.Fatal(err)
	}
	_, cfg2 := putTwo(t, s)
	doc := rawCheckpoint(t, db, cfg2.CheckpointID)
	if typ := doc.Lookup("type").StringValue(); typ != "json" {
		t.Fatalf("type %q, want json", typ)
	}
	if v, err := doc.LookupErr("memvault_values"); err == nil {
		t.Errorf("memvault_values present (%s): every value is inline", v)
	}
	_, bin := doc.Lookup("checkpoint").Binary()
	// What Python's json.loads gives (no lc records here, so the reviver
	// changes nothing).
	var py map[string]any
	if err := json.Unmarshal(bin, &py); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"messages": []any{"hi", "there"}, "count": float64(3), "none": nil}
	if got := py["channel_values"]; !reflect.DeepEqual(got, want) {
		t.Errorf("channel_values %v, want %v (the inherited count and none included)", got, want)
	}
	if got := py["channel_versions"]; !reflect.DeepEqual(got, map[string]any{"messages": float64(2), "count": float64(1), "none": float64(1)}) {
		t.Errorf("channel_versions %v, want integers", got)
	}
	for _, k := range []string{"v", "id", "ts", "versions_seen", "updated_channels"} {
		if _, ok := py[k]; !ok {
			t.Errorf("checkpoint binary lacks %q: %s", k, bin)
		}
	}
	if py["id"] != cfg2.CheckpointID {
		t.Errorf("id %v, want %s", py["id"], cfg2.CheckpointID)
	}
	// memvault still reads it.
	tu, err := s.GetTuple(context.Background(), cfg2)
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(tu.Checkpoint.ChannelValues); got != fmt.Sprint(map[string]any{"messages": []any{"hi", "there"}, "count": int64(3), "none": nil}) {
		t.Errorf("memvault reads %s", got)
	}
}

// TestPythonReadsMsgpackValues: with serde.MsgPack (databases shared with
// Python only) the binary is Python's own form, "msgpack", channel values
// inline, channel versions msgpack integers.
func TestPythonReadsMsgpackValues(t *testing.T) {
	t.Parallel()
	db := mongotest.Database(t)
	s, err := mongosaver.New(db, mongosaver.Options{Serde: serde.MsgPack{}})
	if err != nil {
		t.Fatal(err)
	}
	_, cfg2 := putTwo(t, s)
	doc := rawCheckpoint(t, db, cfg2.CheckpointID)
	if typ := doc.Lookup("type").StringValue(); typ != "msgpack" {
		t.Fatalf("type %q, want msgpack", typ)
	}
	_, bin := doc.Lookup("checkpoint").Binary()
	// The leading bytes: a msgpack map (fixmap 0x80-0x8f), as Python's
	// ormsgpack writes a dict.
	if len(bin) == 0 || bin[0]&0xf0 != 0x80 {
		t.Fatalf("checkpoint binary starts %x, want a msgpack fixmap", bin[:min(len(bin), 8)])
	}
	v, err := serde.MsgPack{}.LoadsTyped("msgpack", bin)
	if err != nil {
		t.Fatal(err)
	}
	m := v.(map[string]any)
	if got := fmt.Sprint(m["channel_values"]); got != fmt.Sprint(map[string]any{"messages": []any{"hi", "there"}, "count": int64(3), "none": nil}) {
		t.Errorf("channel_values %s", got)
	}
	if got := fmt.Sprintf("%T %v", m["channel_versions"].(map[string]any)["messages"], m["channel_versions"].(map[string]any)["messages"]); got != "int64 2" {
		t.Errorf("messages version is %s, want the msgpack integer 2", got)
	}
	tu, err := s.GetTuple(context.Background(), cfg2)
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(tu.Checkpoint.ChannelValues["messages"]); got != "[hi there]" {
		t.Errorf("memvault reads messages %s", got)
	}
}

// TestEncryptedNotForPython: sealed values stay in memvault_values, bound
// to their coordinates and encrypted under memvault's keys; the binary
// holds no value and is typed "json+memvault", which Python's and JS's
// serializers refuse (an unknown type, an unknown cipher) instead of
// reading a checkpoint without state.
func TestEncryptedNotForPython(t *testing.T) {
	t.Parallel()
	db := mongotest.Database(t)
	s, err := mongosaver.New(db, mongosaver.Options{Serde: testkeys.Encrypting(t)})
	if err != nil {
		t.Fatal(err)
	}
	_, cfg2 := putTwo(t, s)
	doc := rawCheckpoint(t, db, cfg2.CheckpointID)
	if typ := doc.Lookup("type").StringValue(); typ != "json+memvault" {
		t.Errorf("type %q, want json+memvault", typ)
	}
	_, bin := doc.Lookup("checkpoint").Binary()
	var py map[string]json.RawMessage
	if err := json.Unmarshal(bin, &py); err != nil {
		t.Fatal(err)
	}
	if string(py["channel_values"]) != "{}" {
		t.Errorf("channel_values %s, want {}", py["channel_values"])
	}
	vals, err := doc.Lookup("memvault_values").Array().Values()
	if err != nil || len(vals) != 3 {
		t.Fatalf("memvault_values: %d entries (%v), want 3", len(vals), err)
	}
	tu, err := s.GetTuple(context.Background(), cfg2)
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(tu.Checkpoint.ChannelValues["messages"]); got != "[hi there]" {
		t.Errorf("memvault reads messages %s", got)
	}
}

// mp builds msgpack by hand from the msgpack spec, as Python's ormsgpack
// writes these values (fixmap / fixarray / fixstr / str8, positive and
// negative fixint): golden bytes that owe nothing to memvault's encoder.
type mp []byte

func (b mp) str(s string) mp {
	if len(s) < 32 {
		return append(append(b, 0xa0|byte(len(s))), s...)
	}
	return append(append(b, 0xd9, byte(len(s))), s...)
}
func (b mp) mapN(n int) mp { return append(b, 0x80|byte(n)) }
func (b mp) arrN(n int) mp { return append(b, 0x90|byte(n)) }
func (b mp) fixint(n int) mp {
	if n < 0 {
		return append(b, byte(0x100+n))
	}
	return append(b, byte(n))
}

// pyCheckpoint is the msgpack of a Python checkpoint dict (v, id, ts,
// channel_values, channel_versions, versions_seen, updated_channels) whose
// channels "messages" (a list of strings) and "step" (an int) are inline.
func pyCheckpoint(id string, messages []string, msgVersion, step int) []byte {
	b := mp{}.mapN(7).str("v").fixint(4).str("id").str(id).str("ts").str("2026-11-29T10:00:00.000000+00:00")
	b = b.str("channel_values").mapN(2).str("messages").arrN(len(messages))
	for _, m := range messages {
		b = b.str(m)
	}
	b = b.str("step").fixint(step)
	b = b.str("channel_versions").mapN(2).str("messages").fixint(msgVersion).str("step").fixint(1)
	b = b.str("versions_seen").mapN(1).str("agent").mapN(1).str("messages").fixint(msgVersion)
	b = b.str("updated_channels").arrN(1).str("messages")
	return b
}

func pyLeaf(b []byte) bson.A { return bson.A{"msgpack", bson.Binary{Data: b}} }

// TestReadsPythonAndJSDocuments: Python's documents (type "msgpack",
// values inline, nested typed metadata) and JS's (type "json", metadata
// one binary + metadata_search, upserted_at, writes without task_path) in
// one collection: memvault reads both with the same ids, values, metadata
// and pending writes, and continues each thread in a form its writer
// reads. (Before: "this version reads json checkpoints only", and a JS
// document's values were not seen.)
func TestReadsPythonAndJSDocuments(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := mongotest.Database(t)
	s := newSaverOn(t, db, mongosaver.Options{})
	cps, writes := db.Collection("checkpoints"), db.Collection("checkpoint_writes")
	py1, py2 := checkpointer.NewID(0), checkpointer.NewID(1)
	js1 := checkpointer.NewID(2)
	now := time.Now().UTC().Truncate(time.Millisecond)
	_, err := cps.InsertMany(ctx, []any{
		bson.D{{Key: "thread_id", Value: "py"}, {Key: "checkpoint_ns", Value: ""}, {Key: "checkpoint_id", Value: py1},
			{Key: "parent_checkpoint_id", Value: nil}, {Key: "type", Value: "msgpack"},
			{Key: "checkpoint", Value: bson.Binary{Data: pyCheckpoint(py1, []string{"hi"}, 1, 1)}},
			{Key: "metadata", Value: bson.D{{Key: "source", Value: pyLeaf(mp{}.str("input"))}, {Key: "step", Value: pyLeaf(mp{}.fixint(-1))}, {Key: "parents", Value: bson.D{}}}}},
		bson.D{{Key: "thread_id", Value: "py"}, {Key: "checkpoint_ns", Value: ""}, {Key: "checkpoint_id", Value: py2},
			{Key: "parent_checkpoint_id", Value: py1}, {Key: "type", Value: "msgpack"},
			{Key: "checkpoint", Value: bson.Binary{Data: pyCheckpoint(py2, []string{"hi", "there"}, 2, 1)}},
			{Key: "metadata", Value: bson.D{{Key: "source", Value: pyLeaf(mp{}.str("loop"))}, {Key: "step", Value: pyLeaf(mp{}.fixint(0))}, {Key: "parents", Value: bson.D{}}}}},
		bson.D{{Key: "thread_id", Value: "js"}, {Key: "checkpoint_ns", Value: ""}, {Key: "checkpoint_id", Value: js1},
			{Key: "parent_checkpoint_id", Value: nil}, {Key: "type", Value: "json"},
			{Key: "checkpoint", Value: bson.Binary{Data: []byte(`{"v":4,"id":"` + js1 + `","ts":"2026-11-29T10:00:00.000Z",` +
				`"channel_values":{"messages":[{"lc":1,"type":"constructor","id":["langchain_core","messages","HumanMessage"],"kwargs":{"content":"hi"}}],"__start__":{"messages":"hi"}},` +
				`"channel_versions":{"__start__":1,"messages":2},"versions_seen":{"__input__":{},"__start__":{"__start__":1}}}`)}},
			{Key: "metadata", Value: bson.Binary{Data: []byte(`{"source":"loop","step":0,"parents":{}}`)}},
			{Key: "metadata_search", Value: bson.D{{Key: "source", Value: "loop"}, {Key: "step", Value: 0}, {Key: "parents", Value: bson.D{}}}},
			{Key: "upserted_at", Value: now}},
	})
	if err != nil {
		t.Fatal(err)
	}
	_, err = writes.InsertMany(ctx, []any{
		bson.D{{Key: "thread_id", Value: "py"}, {Key: "checkpoint_ns", Value: ""}, {Key: "checkpoint_id", Value: py2},
			{Key: "task_id", Value: "t1"}, {Key: "task_path", Value: ""}, {Key: "idx", Value: int32(0)}, {Key: "channel", Value: "messages"},
			{Key: "type", Value: "msgpack"}, {Key: "value", Value: bson.Binary{Data: mp{}.str("w")}}},
		bson.D{{Key: "thread_id", Value: "js"}, {Key: "checkpoint_ns", Value: ""}, {Key: "checkpoint_id", Value: js1},
			{Key: "task_id", Value: "t2"}, {Key: "idx", Value: int32(-3)}, {Key: "channel", Value: "__interrupt__"},
			{Key: "type", Value: "json"}, {Key: "value", Value: bson.Binary{Data: []byte(`[{"value":"approve?","id":"i1"}]`)}},
			{Key: "upserted_at", Value: now}},
	})
	if err != nil {
		t.Fatal(err)
	}

	// Python's thread.
	tu, err := s.GetTuple(ctx, checkpointer.Config{ThreadID: "py"})
	if err != nil {
		t.Fatal(err)
	}
	if tu == nil || tu.Config.CheckpointID != py2 || tu.ParentConfig == nil || tu.ParentConfig.CheckpointID != py1 {
		t.Fatalf("latest of py = %+v, want %s (parent %s)", tu, py2, py1)
	}
	if got := fmt.Sprint(tu.Checkpoint.ChannelValues); got != "map[messages:[hi there] step:1]" {
		t.Errorf("py values %s", got)
	}
	if got := tu.Checkpoint.ChannelVersions; got["messages"] != "2" || got["step"] != "1" {
		t.Errorf("py versions %v", got)
	}
	if fmt.Sprintf("%v %v", tu.Metadata["source"], tu.Metadata["step"]) != "loop 0" {
		t.Errorf("py metadata %v", tu.Metadata)
	}
	if len(tu.PendingWrites) != 1 || tu.PendingWrites[0].TaskID != "t1" || tu.PendingWrites[0].Value != "w" {
		t.Errorf("py pending writes %+v", tu.PendingWrites)
	}
	var ids []string
	for tu, err := range s.List(ctx, &checkpointer.Config{ThreadID: "py"}, checkpointer.ListOptions{Filter: map[string]any{"source": "input"}}) {
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, tu.Config.CheckpointID)
	}
	if len(ids) != 1 || ids[0] != py1 {
		t.Errorf("List(source=input) = %v, want [%s]", ids, py1)
	}
	// memvault continues it: the new document holds the inherited step
	// inline, in Python's msgpack form (the inherited value came as
	// msgpack).
	v3 := s.NextVersion("2")
	cp := tu.Checkpoint
	cp.ID, cp.TS = checkpointer.NewID(3), time.Now()
	cp.ChannelValues["messages"] = []any{"hi", "there", "go"}
	cp.ChannelVersions["messages"] = v3
	next, err := s.Put(ctx, tu.Config, cp, checkpointer.Metadata{"source": "loop", "step": 1}, map[string]string{"messages": v3})
	if err != nil {
		t.Fatal(err)
	}
	doc := rawCheckpoint(t, db, next.CheckpointID)
	if typ := doc.Lookup("type").StringValue(); typ != "msgpack" {
		t.Errorf("continuation of the Python thread has type %q, want msgpack", typ)
	}
	_, bin := doc.Lookup("checkpoint").Binary()
	v, err := serde.MsgPack{}.LoadsTyped("msgpack", bin)
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(v.(map[string]any)["channel_values"]); got != "map[messages:[hi there go] step:1]" {
		t.Errorf("what Python reads of the continuation: %s", got)
	}
	if again, err := s.GetTuple(ctx, next); err != nil || fmt.Sprint(again.Checkpoint.ChannelValues) != "map[messages:[hi there go] step:1]" {
		t.Errorf("memvault reads its continuation: %v, %v", again, err)
	}

	// JS's thread.
	tu, err = s.GetTuple(ctx, checkpointer.Config{ThreadID: "js"})
	if err != nil {
		t.Fatal(err)
	}
	if tu == nil || tu.Config.CheckpointID != js1 || tu.ParentConfig != nil {
		t.Fatalf("latest of js = %+v, want %s", tu, js1)
	}
	if got := fmt.Sprint(tu.Checkpoint.ChannelValues["__start__"]); got != "map[messages:hi]" {
		t.Errorf("js __start__ = %s", got)
	}
	typ, data, err := serde.JSONPlus{}.DumpsTyped(tu.Checkpoint.ChannelValues["messages"])
	if err != nil || typ != "json" || !jsonEqual(data, `[{"lc":1,"type":"constructor","id":["langchain_core","messages","HumanMessage"],"kwargs":{"content":"hi"}}]`) {
		t.Errorf("js messages written back as %s %s (%v)", typ, data, err)
	}
	if fmt.Sprintf("%v %v", tu.Metadata["source"], tu.Metadata["step"]) != "loop 0" {
		t.Errorf("js metadata %v", tu.Metadata)
	}
	if len(tu.PendingWrites) != 1 || tu.PendingWrites[0].TaskID != "t2" || tu.PendingWrites[0].Channel != "__interrupt__" ||
		fmt.Sprint(tu.PendingWrites[0].Value) != "[map[id:i1 value:approve?]]" {
		t.Errorf("js pending writes %+v", tu.PendingWrites)
	}
	v3 = s.NextVersion("2")
	cp = tu.Checkpoint
	cp.ID, cp.TS = checkpointer.NewID(4), time.Now()
	cp.ChannelValues["messages"] = []any{"hi", "ok"}
	cp.ChannelVersions["messages"] = v3
	next, err = s.Put(ctx, tu.Config, cp, checkpointer.Metadata{"source": "loop", "step": 1}, map[string]string{"messages": v3})
	if err != nil {
		t.Fatal(err)
	}
	doc = rawCheckpoint(t, db, next.CheckpointID)
	_, bin = doc.Lookup("checkpoint").Binary()
	var js struct {
		Values   map[string]json.RawMessage `json:"channel_values"`
		Versions map[string]json.RawMessage `json:"channel_versions"`
	}
	if typ := doc.Lookup("type").StringValue(); typ != "json" {
		t.Errorf("continuation of the JS thread has type %q, want json", typ)
	}
	if err := json.Unmarshal(bin, &js); err != nil {
		t.Fatal(err)
	}
	if string(js.Values["__start__"]) != `{"messages":"hi"}` || !jsonEqual(js.Values["messages"], `["hi","ok"]`) || string(js.Versions["messages"]) != "3" {
		t.Errorf("what JS reads of the continuation: values %s, versions %s", js.Values, js.Versions)
	}

	// memvault's removals on the mixed threads: the heads of Python's and
	// JS's documents (no memvault_v) are read from their checkpoints.
	if err := s.Prune(ctx, []string{"py", "js"}, checkpointer.PruneKeepLatest); err != nil {
		t.Fatal(err)
	}
	for thread, want := range map[string]string{"py": "map[messages:[hi there go] step:1]", "js": "map[__start__:map[messages:hi] messages:[hi ok]]"} {
		n := 0
		for tu, err := range s.List(ctx, &checkpointer.Config{ThreadID: thread}, checkpointer.ListOptions{}) {
			if err != nil {
				t.Fatal(err)
			}
			n++
			if got := fmt.Sprint(tu.Checkpoint.ChannelValues); got != want {
				t.Errorf("%s after the prune: %s, want %s", thread, got, want)
			}
		}
		if n != 1 {
			t.Errorf("%s after the prune: %d checkpoints, want 1", thread, n)
		}
	}
	if n, err := writes.CountDocuments(ctx, bson.D{}); err != nil || n != 0 {
		t.Errorf("%d writes left after the prune (%v), want 0: they belonged to pruned checkpoints", n, err)
	}
}

func jsonEqual(a []byte, b string) bool {
	var x, y any
	return json.Unmarshal(a, &x) == nil && json.Unmarshal([]byte(b), &y) == nil && reflect.DeepEqual(x, y)
}
