package mongosaver_test

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/memvault/memvault/backends/mongodb/mongosaver"
	"github.com/memvault/memvault/backends/mongodb/mongotest"
	"github.com/memvault/memvault/checkpointer"
)

// pythonLeaves are the msgpack bytes Python writes for each metadata
// value, from Debian's python3-msgpack 1.0.3:
// msgpack.packb(v, use_bin_type=True).hex(). LangGraph writes them with
// ormsgpack, which packs these types the same way (smallest int and str
// widths, float64 for float).
var pythonLeaves = map[string]string{
	"source": "a46c6f6f70",
	"step":   "03",
	"run_id": "a3722d31",
	"score":  "cb3fe0000000000000",
	"flag":   "c3",
	"big":    "cd012c",
	"neg":    "d0d8",
	"tags":   "92a16101",
	"long":   "d928" + strings.Repeat("78", 40),
}

// TestGoldenDocuments checks, field by field, the documents a put and a
// put_writes store against the layout of Python's MongoDBSaver
// (langgraph-checkpoint-mongodb 0.4 saver.py and utils.py).
func TestGoldenDocuments(t *testing.T) {
	ctx := context.Background()
	db := mongotest.Database(t)
	s := newSaverOn(t, db, mongosaver.Options{})
	md := checkpointer.Metadata{"source": "loop", "step": 3, "run_id": "r-1", "score": 0.5, "flag": true, "big": 300,
		"neg": -40, "tags": []any{"a", 1}, "long": strings.Repeat("x", 40), "extra": map[string]any{"node": map[string]any{"k": "v"}}, "parents": map[string]any{},
		"none": nil}
	cp1 := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(0), TS: time.Now(),
		ChannelValues: map[string]any{"messages": []any{"hi"}}, ChannelVersions: map[string]string{"messages": s.NextVersion("")}}
	cfg1, err := s.Put(ctx, checkpointer.Config{ThreadID: "gold"}, cp1, md, cp1.ChannelVersions)
	if err != nil {
		t.Fatal(err)
	}
	cp2 := &checkpointer.Checkpoint{V: 4, ID: checkpointer.NewID(1), TS: time.Now(),
		ChannelValues: map[string]any{"messages": []any{"hi", "there"}}, ChannelVersions: map[string]string{"messages": s.NextVersion("1")}}
	cfg2, err := s.Put(ctx, cfg1, cp2, checkpointer.Metadata{"source": "loop", "step": 4}, cp2.ChannelVersions)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.PutWrites(ctx, cfg2, []checkpointer.Write{{Channel: "messages", Value: "w"}}, "task-1", "path-1"); err != nil {
		t.Fatal(err)
	}

	var doc1, doc2 bson.Raw
	for _, c := range []struct {
		id  string
		out *bson.Raw
	}{{cfg1.CheckpointID, &doc1}, {cfg2.CheckpointID, &doc2}} {
		if err := db.Collection("checkpoints").FindOne(ctx, bson.D{{Key: "checkpoint_id", Value: c.id}}).Decode(c.out); err != nil {
			t.Fatal(err)
		}
	}
	// Every value is inline (plaintext JSON): no memvault_values.
	wantFields := []string{"_id", "thread_id", "checkpoint_ns", "checkpoint_id", "parent_checkpoint_id", "type", "checkpoint", "metadata",
		"memvault_keys", "memvault_v"}
	if got := keys(t, doc1); !sameSet(got, wantFields) {
		t.Errorf("checkpoint fields %v, want %v (no created_at without TTL)", got, wantFields)
	}
	str := func(d bson.Raw, k string) string {
		t.Helper()
		v, ok := d.Lookup(k).StringValueOK()
		if !ok {
			t.Fatalf("%s is BSON %s, want string", k, d.Lookup(k).Type)
		}
		return v
	}
	if str(doc1, "thread_id") != "gold" || str(doc1, "checkpoint_ns") != "" || str(doc1, "checkpoint_id") != cfg1.CheckpointID || str(doc1, "type") != "json" {
		t.Errorf("coordinates or type wrong: %s", doc1)
	}
	if typ := doc1.Lookup("parent_checkpoint_id").Type; typ != bson.TypeNull {
		t.Errorf("first parent_checkpoint_id is BSON %s, want null", typ)
	}
	if str(doc2, "parent_checkpoint_id") != cfg1.CheckpointID {
		t.Errorf("second parent_checkpoint_id wrong")
	}
	sub, data, ok := doc2.Lookup("checkpoint").BinaryOK()
	if !ok || sub != 0 {
		t.Fatalf("checkpoint is %s subtype %d, want binary subtype 0", doc2.Lookup("checkpoint").Type, sub)
	}
	var body struct {
		ID       string                     `json:"id"`
		Values   map[string]json.RawMessage `json:"channel_values"`
		Versions map[string]json.RawMessage `json:"channel_versions"`
	}
	if err := json.Unmarshal(data, &body); err != nil {
		t.Fatal(err)
	}
	if body.ID != cfg2.CheckpointID || string(body.Versions["messages"]) != "2" {
		t.Errorf("checkpoint binary: id %q, messages version %s; want %q and the integer 2", body.ID, body.Versions["messages"], cfg2.CheckpointID)
	}
	if string(body.Values["messages"]) != `["hi","there"]` {
		t.Errorf("checkpoint binary: messages %s, want the value inline", body.Values["messages"])
	}

	// Metadata: dicts nested, every other value a [type, binary] pair
	// with Python's bytes.
	meta := doc1.Lookup("metadata").Document()
	for k, want := range pythonLeaves {
		typ, data := leaf(t, meta.Lookup(k))
		if typ != "msgpack" || hex.EncodeToString(data) != want {
			t.Errorf("metadata %s = [%q, %x], want [\"msgpack\", %s]", k, typ, data, want)
		}
	}
	if typ, data := leaf(t, meta.Lookup("none")); typ != "null" || len(data) != 0 {
		t.Errorf("metadata none = [%q, %x], want [\"null\", b\"\"]", typ, data)
	}
	if typ, data := leaf(t, meta.Lookup("extra", "node", "k")); typ != "msgpack" || hex.EncodeToString(data) != "a176" {
		t.Errorf("nested metadata extra.node.k = [%q, %x], want [\"msgpack\", a176]", typ, data)
	}

	if p, ok := meta.Lookup("parents").DocumentOK(); !ok || len(p) != 5 {
		t.Errorf("metadata parents is %s, want the empty document", meta.Lookup("parents"))
	}

	// Python's list(filter={"source": "loop", "step": 3}) builds this
	// query; it must find the checkpoint.
	src, _ := hex.DecodeString(pythonLeaves["source"])
	step, _ := hex.DecodeString(pythonLeaves["step"])
	n, err := db.Collection("checkpoints").CountDocuments(ctx, bson.D{
		{Key: "metadata.source", Value: bson.A{"msgpack", bson.Binary{Data: src}}},
		{Key: "metadata.step", Value: bson.A{"msgpack", bson.Binary{Data: step}}}})
	if err != nil || n != 1 {
		t.Errorf("Python's metadata filter matched %d documents (%v), want 1", n, err)
	}

	// The pending write.
	var w bson.Raw
	if err := db.Collection("checkpoint_writes").FindOne(ctx, bson.D{}).Decode(&w); err != nil {
		t.Fatal(err)
	}
	wantW := []string{"_id", "thread_id", "checkpoint_ns", "checkpoint_id", "task_id", "task_path", "idx", "channel", "type", "value"}
	if got := keys(t, w); !sameSet(got, wantW) {
		t.Errorf("write fields %v, want %v", got, wantW)
	}
	if idx := w.Lookup("idx"); idx.Type != bson.TypeInt32 || idx.Int32() != 0 {
		t.Errorf("idx is BSON %s %v, want int32 0", idx.Type, idx)
	}
	if str(w, "task_id") != "task-1" || str(w, "task_path") != "path-1" || str(w, "channel") != "messages" || str(w, "checkpoint_id") != cfg2.CheckpointID {
		t.Errorf("write fields wrong: %s", w)
	}
	if sub, _, ok := w.Lookup("value").BinaryOK(); !ok || sub != 0 {
		t.Errorf("write value is not binary subtype 0")
	}

	// Python's unique indexes, under create_index's default names.
	for coll, want := range map[string]string{
		"checkpoints":       `{"thread_id": {"$numberInt":"1"},"checkpoint_ns": {"$numberInt":"1"},"checkpoint_id": {"$numberInt":"-1"}}`,
		"checkpoint_writes": `{"thread_id": {"$numberInt":"1"},"checkpoint_ns": {"$numberInt":"1"},"checkpoint_id": {"$numberInt":"-1"},"task_id": {"$numberInt":"1"},"idx": {"$numberInt":"1"}}`,
	} {
		cur, err := db.Collection(coll).Indexes().List(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var idx []bson.Raw
		if err := cur.All(ctx, &idx); err != nil {
			t.Fatal(err)
		}
		found := false
		for _, ix := range idx {
			if ix.Lookup("key").Document().String() == strings.ReplaceAll(want, ": ", ":") || compactEqual(ix.Lookup("key").Document().String(), want) {
				found = true
				name := ix.Lookup("name").StringValue()
				wantName := map[string]string{"checkpoints": "thread_id_1_checkpoint_ns_1_checkpoint_id_-1",
					"checkpoint_writes": "thread_id_1_checkpoint_ns_1_checkpoint_id_-1_task_id_1_idx_1"}[coll]
				if name != wantName {
					t.Errorf("%s index name %q, want %q", coll, name, wantName)
				}
				if u, ok := ix.Lookup("unique").BooleanOK(); !ok || !u {
					t.Errorf("%s index %q is not unique", coll, name)
				}
			}
		}
		if !found {
			t.Errorf("%s: no index on %s among %v", coll, want, idx)
		}
	}
}

func compactEqual(a, b string) bool {
	strip := func(s string) string { return strings.Join(strings.Fields(s), "") }
	return strip(a) == strip(b)
}

func leaf(t *testing.T, v bson.RawValue) (string, []byte) {
	t.Helper()
	arr, ok := v.ArrayOK()
	if !ok {
		t.Fatalf("metadata leaf is BSON %s, want array", v.Type)
	}
	vals, err := arr.Values()
	if err != nil || len(vals) != 2 {
		t.Fatalf("metadata leaf %s is not a pair", v)
	}
	typ, ok := vals[0].StringValueOK()
	sub, data, ok2 := vals[1].BinaryOK()
	if !ok || !ok2 || sub != 0 {
		t.Fatalf("metadata leaf %s is not [string, binary subtype 0]", v)
	}
	return typ, bytes.Clone(data)
}

func keys(t *testing.T, d bson.Raw) []string {
	t.Helper()
	elems, err := d.Elements()
	if err != nil {
		t.Fatal(err)
	}
	out := make([]string, len(elems))
	for i, e := range elems {
		out[i] = e.Key()
	}
	return out
}

func sameSet(a, b []string) bool {
	return slices.Equal(slices.Sorted(slices.Values(a)), slices.Sorted(slices.Values(b)))
}

// TestPythonMsgpackLeaves packs the golden metadata values with Python's
// msgpack (Debian's python3-msgpack, installed by scripts/install-deps.sh)
// and compares them with pythonLeaves, which TestGoldenDocuments compares
// with what memvault stores: memvault's leaves are Python's bytes, checked
// against Python itself, not only against a recorded table. In CI a
// missing python3-msgpack fails the test; elsewhere it skips.
func TestPythonMsgpackLeaves(t *testing.T) {
	const script = `import json, sys, msgpack
for k, v in json.load(sys.stdin).items():
    print(k, msgpack.packb(v, use_bin_type=True).hex())`
	// Debian's interpreter first: python3-msgpack is installed for it, and
	// a python3 earlier on PATH (pyenv, a virtualenv) may lack the module.
	var py string
	err := errors.New("no python3")
	for _, cand := range []string{"/usr/bin/python3", "python3"} {
		if p, lerr := exec.LookPath(cand); lerr == nil {
			if err = exec.Command(p, "-c", "import msgpack").Run(); err == nil {
				py = p
				break
			}
		}
	}
	if py == "" {
		if os.Getenv("CI") == "true" {
			t.Fatalf("python3 with msgpack is needed (scripts/install-deps.sh installs python3-msgpack): %v", err)
		}
		t.Skipf("python3 with msgpack not found (scripts/install-deps.sh installs it): %v", err)
	}
	values := map[string]any{"source": "loop", "step": 3, "run_id": "r-1", "score": 0.5, "flag": true, "big": 300,
		"neg": -40, "tags": []any{"a", 1}, "long": strings.Repeat("x", 40)}
	in, err := json.Marshal(values)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(py, "-c", script)
	cmd.Stdin = bytes.NewReader(in)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("python3: %v", err)
	}
	got := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		k, v, _ := strings.Cut(line, " ")
		got[k] = v
	}
	if len(got) != len(pythonLeaves) {
		t.Fatalf("python3 packed %d values, want %d: %q", len(got), len(pythonLeaves), out)
	}
	for k, want := range pythonLeaves {
		if got[k] != want {
			t.Errorf("Python packs %s as %s, the golden table says %s", k, got[k], want)
		}
	}
}
