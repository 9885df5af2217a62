package mongosaver_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/memvault/memvault/backends/mongodb/mongosaver"
	"github.com/memvault/memvault/backends/mongodb/mongotest"
	"github.com/memvault/memvault/checkpointer"
	"github.com/memvault/memvault/serde"
)

// jsDir holds the JS scripts and their pinned npm packages
// (@langchain/langgraph-checkpoint-mongodb 1.4.1, installed by
// scripts/install-deps.sh).
const jsDir = "testdata/js"

// requireNode skips the test when node or the npm packages are missing,
// except in CI (CI=true), where that is a failure: the interop test must
// run there.
func requireNode(t *testing.T) {
	t.Helper()
	missing := ""
	if _, err := exec.LookPath("node"); err != nil {
		missing = "node is not installed"
	} else if _, err := os.Stat(filepath.Join(jsDir, "node_modules", "@langchain", "langgraph-checkpoint-mongodb")); err != nil {
		missing = "the npm packages of " + jsDir + " are not installed (run scripts/install-deps.sh, or npm ci --prefix backends/mongodb/" + jsDir + ")"
	}
	if missing == "" {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("JS interop test cannot run in CI: %s", missing)
	}
	t.Skipf("JS interop test skipped: %s", missing)
}

// jsTuple is a tuple as lib.mjs prints it.
type jsTuple struct {
	ID       string                     `json:"id"`
	NS       string                     `json:"ns"`
	Parent   *string                    `json:"parent"`
	Values   map[string]jsWire          `json:"values"`
	Versions map[string]json.RawMessage `json:"versions"`
	Metadata json.RawMessage            `json:"metadata"`
	Writes   []struct {
		Task    string `json:"task"`
		Channel string `json:"channel"`
		Value   jsWire `json:"value"`
	} `json:"writes"`
}

type jsWire struct {
	Type string `json:"type"`
	JSON string `json:"json"`
}

func runJS(t *testing.T, uri, script, db, thread string) []jsTuple {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", script, db, thread)
	cmd.Dir = jsDir
	cmd.Env = append(os.Environ(), "MONGODB_URI="+uri)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node %s: %v\n%s", script, err, stderr.Bytes())
	}
	var tuples []jsTuple
	if err := json.Unmarshal(out, &tuples); err != nil {
		t.Fatalf("node %s printed %q: %v", script, out, err)
	}
	return tuples
}

// wireOf is memvault's value in JS's wire form: what JSONPlus writes for
// it, which must be what JS wrote, up to key order and number spelling.
func wireOf(t *testing.T, v any) string {
	t.Helper()
	typ, data, err := serde.JSONPlus{}.DumpsTyped(v)
	if err != nil || typ != "json" {
		t.Fatalf("JSONPlus writes %T as %q (%v)", v, typ, err)
	}
	return string(data)
}

// checkSame checks memvault's tuple against JS's reading of the same
// checkpoint.
func checkSame(t *testing.T, got *checkpointer.Tuple, want jsTuple) {
	t.Helper()
	if got == nil {
		t.Fatalf("memvault does not find checkpoint %s", want.ID)
	}
	if got.Config.CheckpointID != want.ID || got.Config.CheckpointNS != want.NS {
		t.Errorf("memvault reads %s/%q, JS %s/%q", got.Config.CheckpointID, got.Config.CheckpointNS, want.ID, want.NS)
	}
	gotParent := ""
	if got.ParentConfig != nil {
		gotParent = got.ParentConfig.CheckpointID
	}
	if wantParent := ptrStr(want.Parent); gotParent != wantParent {
		t.Errorf("%s: parent %q, JS %q", want.ID, gotParent, wantParent)
	}
	if len(got.Checkpoint.ChannelValues) != len(want.Values) {
		t.Errorf("%s: memvault reads channels %v, JS %v", want.ID, keysOf(got.Checkpoint.ChannelValues), keysOf(want.Values))
	}
	for ch, w := range want.Values {
		v, ok := got.Checkpoint.ChannelValues[ch]
		if !ok {
			t.Errorf("%s: channel %q missing", want.ID, ch)
			continue
		}
		if g := wireOf(t, v); w.Type != "json" || !jsonEqual([]byte(g), w.JSON) {
			t.Errorf("%s: channel %q: memvault %s, JS %s %s", want.ID, ch, g, w.Type, w.JSON)
		}
	}
	for ch, raw := range want.Versions {
		if g := got.Checkpoint.ChannelVersions[ch]; g != string(raw) {
			t.Errorf("%s: version of %q: memvault %q, JS %s", want.ID, ch, g, raw)
		}
	}
	md, _ := json.Marshal(map[string]any(got.Metadata))
	if !jsonEqual(md, string(want.Metadata)) {
		t.Errorf("%s: metadata: memvault %s, JS %s", want.ID, md, want.Metadata)
	}
	var gw, ww []string
	for _, w := range got.PendingWrites {
		gw = append(gw, fmt.Sprintf("%s %s %s", w.TaskID, w.Channel, canon(t, wireOf(t, w.Value))))
	}
	for _, w := range want.Writes {
		ww = append(ww, fmt.Sprintf("%s %s %s", w.Task, w.Channel, canon(t, w.Value.JSON)))
	}
	slices.Sort(gw)
	slices.Sort(ww)
	if !slices.Equal(gw, ww) {
		t.Errorf("%s: pending writes:\nmemvault %q\nJS       %q", want.ID, gw, ww)
	}
}

func canon(t *testing.T, s string) string {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("%q: %v", s, err)
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func ptrStr(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

func keysOf[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// TestJSInterop runs LangGraph.js's MongoDBSaver
// (@langchain/langgraph-checkpoint-mongodb 1.4.1) against the test
// FerretDB: JS writes a thread that stops at an interrupt, with pending
// writes; memvault's Setup runs on JS's collections; memvault reads every
// checkpoint with JS's ids, values, versions, metadata and writes, and
// continues the thread (a checkpoint and pending writes, in the JS layout);
// JS reads memvault's continuation as memvault reads it.
func TestJSInterop(t *testing.T) {
	requireNode(t)
	t.Parallel()
	ctx := context.Background()
	uri := mongotest.URI(t)
	client, err := mongo.Connect(options.Client().ApplyURI(uri))
	if err != nil {
		t.Fatal(err)
	}
	dbName := fmt.Sprintf("js%d", time.Now().UnixNano())
	db := client.Database(dbName)
	t.Cleanup(func() { _ = db.Drop(context.Background()); _ = client.Disconnect(context.Background()) })

	const thread = "js-interrupt"
	wrote := runJS(t, uri, "write.mjs", dbName, thread)
	if len(wrote) != 2 {
		t.Fatalf("JS lists %d checkpoints, want 2", len(wrote))
	}

	s, err := mongosaver.New(db, mongosaver.Options{JSLayout: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Setup(ctx); err != nil {
		t.Fatalf("memvault Setup on JS's collections: %v", err)
	}
	var listed []*checkpointer.Tuple
	for tu, err := range s.List(ctx, &checkpointer.Config{ThreadID: thread}, checkpointer.ListOptions{AllNamespaces: true}) {
		if err != nil {
			t.Fatal(err)
		}
		listed = append(listed, tu)
	}
	if len(listed) != len(wrote) {
		t.Fatalf("memvault lists %d checkpoints, JS %d", len(listed), len(wrote))
	}
	for i, want := range wrote {
		checkSame(t, listed[i], want)
		one, err := s.GetTuple(ctx, checkpointer.Config{ThreadID: thread, CheckpointID: want.ID})
		if err != nil {
			t.Fatal(err)
		}
		checkSame(t, one, want)
	}
	latest := listed[0]
	if !slices.ContainsFunc(latest.PendingWrites, func(w checkpointer.PendingWrite) bool { return w.Channel == "__interrupt__" }) {
		t.Fatalf("memvault does not see the interrupt: %+v", latest.PendingWrites)
	}

	// memvault continues the thread: the resumed step.
	cp := latest.Checkpoint
	cp.ID, cp.TS = checkpointer.NewID(0), time.Now()
	msgs, _ := cp.ChannelValues["messages"].([]any)
	cp.ChannelValues["messages"] = append(slices.Clone(msgs), map[string]any{"role": "assistant", "content": "Refunded 42.50."})
	v := s.NextVersion(cp.ChannelVersions["messages"])
	cp.ChannelVersions["messages"] = v
	next, err := s.Put(ctx, latest.Config, cp, checkpointer.Metadata{"source": "loop", "step": 1, "parents": map[string]any{}, "user_id": "u-1"},
		map[string]string{"messages": v})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.PutWrites(ctx, next, []checkpointer.Write{{Channel: "count", Value: 2}}, "task-after", ""); err != nil {
		t.Fatal(err)
	}

	// JS reads the continuation, and the checkpoints it wrote, as memvault
	// reads them.
	read := runJS(t, uri, "read.mjs", dbName, thread)
	if len(read) != 3 || read[0].ID != next.CheckpointID {
		t.Fatalf("JS lists %d checkpoints (newest %v), want 3, newest %s", len(read), read, next.CheckpointID)
	}
	for _, want := range read {
		one, err := s.GetTuple(ctx, checkpointer.Config{ThreadID: thread, CheckpointID: want.ID})
		if err != nil {
			t.Fatal(err)
		}
		checkSame(t, one, want)
	}
	if string(read[0].Versions["messages"]) != v {
		t.Errorf("JS reads the messages version as %s, want the integer %s", read[0].Versions["messages"], v)
	}
}
